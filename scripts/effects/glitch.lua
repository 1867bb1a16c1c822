-- A digital glitch over the whole picture: the red and blue channels split sideways and
-- bands of rows slide left and right, in short seeded strikes (or all the time), as a list
-- of filters for the video composition.
--
--   local glitch = require "effects.glitch"
--   vc.filters = glitch{ intensity = 0.8, rate = 1, burst = 0.3 }     -- about once a second
--   vc.filters = glitch{ mode = "continuous", intensity = 0.4 }         -- all the time
--
-- It is one `glitch` filter. During a strike, red moves `shift` render-size pixels right and
-- blue as far left (an edge gets a red fringe on one side and a blue one on the other), and
-- `bands` bands of rows (each 1/60 to 1/10 of the height) slide sideways by up to
-- `bandOffset` pixels, wrapping round; both are scaled by `intensity`. The bands change 12
-- times a second. In "bursts" mode time is cut into slots of 1/rate seconds and each slot
-- has one strike `burst` seconds long at a seeded moment; everything comes from the seed
-- and the frame's time, so an export is the same every time. The intensity can change over
-- time by the filter's name:
--   vc:setFilterRamp("glitch", "intensity", 0, 1, av.range(4, 1))   -- building up to a cut
-- A filter list is not a layer: give it to vc.filters (the whole picture), li.filters (one
-- track) or layer.filters (one layer), not to addSublayer.
return {
  name = "glitch",
  version = "1.0.0",
  description = "Channel split and offset bands in seeded strikes (or continuous), as filters for vc.filters",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "intensity", type = "number", min = 0, max = 1, default = 0.7, doc = "how strong: scales the channel split and the band slides; 0 nothing" },
    { name = "mode", type = "string", default = "bursts", choices = { "bursts", "continuous" }, doc = "bursts: strikes at seeded moments, `rate` a second; continuous: glitching all the time" },
    { name = "rate", type = "number", min = 0.05, max = 30, default = 1.5, doc = "bursts: strikes a second (each at a seeded moment of its 1/rate-second slot)" },
    { name = "burst", type = "number", min = 0.02, max = 10, default = 0.25, doc = "bursts: seconds each strike lasts (as long as a slot or longer: all the time)" },
    { name = "shift", type = "number", min = 0, max = 200, default = 12, doc = "render-size pixels red moves right and blue moves left, at intensity 1" },
    { name = "bands", type = "integer", min = 0, max = 32, default = 6, doc = "bands of rows slid sideways in each pattern; 0: channel split only" },
    { name = "bandOffset", type = "number", min = 0, max = 2000, default = 80, doc = "the largest slide of a band, render-size pixels at intensity 1" },
    { name = "seed", type = "integer", min = 0, max = 2147483647, default = 0, doc = "picks the strike moments and the bands; the same seed and time give the same pixels" },
    { name = "filterName", type = "string", default = "glitch", doc = "the filter's name, for vc:setFilterRamp(name, \"intensity\", …) and filters.NAME.intensity key paths" },
  },
  example = { intensity = 0.8, mode = "continuous", seed = 2 },
  previewAt = 1,

  apply = function(p)
    return {
      av.filter("glitch", {
        intensity = p.intensity, rate = p.mode == "continuous" and 0 or p.rate, burst = p.burst,
        shift = p.shift, bands = p.bands, bandOffset = p.bandOffset, seed = p.seed, name = p.filterName,
      }),
    }
  end,
}
