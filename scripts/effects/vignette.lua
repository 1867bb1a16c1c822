-- A vignette look: the picture darkens towards its corners (or, with lighten = true, fades
-- to white there), as a list of filters for the video composition.
--
--   local vignette = require "effects.vignette"
--   vc.filters = vignette{ strength = 0.6, radius = 0.8 }
--   -- or after another look:  local filters = look{ preset = "warm" }
--   --                         for _, f in ipairs(vignette{}) do filters[#filters + 1] = f end
--   --                         vc.filters = filters
--
-- It is one `vignette` filter (Core Image's CIVignette): each pixel is multiplied by
-- 1 − strength · t², t going from 0 at radius/2 of the way from the centre to a corner, to 1
-- at the corners. Its parameters can change over time by the filter's name:
--   vc:setFilterRamp("vignette", "intensity", 0, 0.6, av.range(0, 2))   -- darken in over 2 s
-- A filter list is not a layer: give it to vc.filters (the whole picture), li.filters (one
-- track) or layer.filters (one layer), not to addSublayer.
return {
  name = "vignette",
  version = "1.0.0",
  description = "Darkens (or lightens) the picture towards its corners: a list of filters for vc.filters",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "strength", type = "number", min = 0, max = 1, default = 0.6, doc = "how dark the corners get: 0 nothing, 1 black corners (the filter's intensity)" },
    { name = "radius", type = "number", min = 0, max = 2, default = 1, doc = "where the darkening starts: 0 at the centre, 1 halfway to the corners, 2 nowhere (the filter's radius; smaller is a wider, stronger vignette)" },
    { name = "lighten", type = "boolean", default = false, doc = "fade the corners towards white instead of black (a negative intensity)" },
    { name = "filterName", type = "string", default = "vignette", doc = "the filter's name, for vc:setFilterRamp(name, \"intensity\", …) and filters.NAME.intensity key paths" },
  },
  example = { strength = 0.8, radius = 0.8 },

  apply = function(p)
    return {
      av.filter("vignette", { intensity = p.lighten and -p.strength or p.strength, radius = p.radius, name = p.filterName }),
    }
  end,
}
