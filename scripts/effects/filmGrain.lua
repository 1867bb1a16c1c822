-- Film grain over the whole picture: fine noise in the brightness, a new pattern every
-- frame, as a list of filters for the video composition.
--
--   local filmGrain = require "effects.filmGrain"
--   vc.filters = filmGrain{ amount = 0.3, size = 1.5 }
--   -- after a look:  local filters = look{ preset = "faded" }
--   --                for _, f in ipairs(filmGrain{}) do filters[#filters + 1] = f end
--   --                vc.filters = filters
--
-- It is one `grain` filter: each frame, a grid of cells `size` render pixels apart gets
-- seeded random numbers (near Gaussian), blended smoothly between cells, and Y' moves by
-- amount · 0.12 · that (amount 1: a standard deviation of 12 % of black to white, a heavy
-- 16 mm look; 0.2-0.35 reads as fine 35 mm). Colours are kept; the mean brightness too,
-- except where the picture clips at black or white. The pattern is a function of the seed
-- and the frame's time, so the same export twice gives the same pixels, and the same seed
-- on two clips gives them the same grain. The amount can change over time by the filter's
-- name:
--   vc:setFilterRamp("grain", "amount", 0.6, 0.25, av.range(0, 2))   -- heavy grain settling
-- A filter list is not a layer: give it to vc.filters (the whole picture), li.filters (one
-- track) or layer.filters (one layer), not to addSublayer.
return {
  name = "filmGrain",
  version = "1.0.0",
  description = "Film grain: seeded brightness noise, new every frame, as filters for vc.filters",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "amount", type = "number", min = 0, max = 1, default = 0.3, doc = "how strong: the noise's standard deviation is amount · 12 % of black to white; 0 none" },
    { name = "size", type = "number", min = 0.5, max = 16, default = 1.5, doc = "how coarse: grains about this many render-size pixels across (never finer than a pixel)" },
    { name = "seed", type = "integer", min = 0, max = 2147483647, default = 0, doc = "picks the pattern; the same seed and time give the same grain" },
    { name = "filterName", type = "string", default = "grain", doc = "the filter's name, for vc:setFilterRamp(name, \"amount\", …) and filters.NAME.amount key paths" },
  },
  example = { amount = 0.35, size = 1.5 },
  previewAt = 1,

  apply = function(p)
    return {
      av.filter("grain", { amount = p.amount, size = p.size, seed = p.seed, name = p.filterName }),
    }
  end,
}
