-- Colour looks for the whole picture: a preset ("warm", "cool", "mono", "faded", "punchy",
-- "night") as a list of filters for the video composition, with `amount` mixing it toward
-- the untouched picture.
--
--   local look = require "effects.look"
--   vc.filters = look{ preset = "mono" }                          -- black and white
--   vc.filters = look{ preset = "punchy", amount = 0.5 }          -- half as strong
--
-- What each preset sets at amount = 1 (amount a gives neutral + a · (value − neutral)):
--   warm    white point (1, 0.93, 0.82): blue and some green held back in linear light;
--           saturation 1.1, contrast 1.05
--   cool    white point (0.86, 0.94, 1): red and some green held back; saturation 0.95,
--           contrast 1.05
--   mono    saturation 0 (grey by Rec. 709 luma), contrast 1.1
--   faded   saturation 0.75, contrast 0.8, brightness +0.04: lifted blacks, soft whites
--   punchy  saturation 1.35, contrast 1.2
--   night   exposure −1.3 stops, white point (0.7, 0.85, 1), saturation 0.5, contrast 1.1
--           ("day for night")
-- The filters are exposureAdjust (night), whitePointAdjust (warm, cool, night) and
-- colorControls, in that order, named "lookExposure", "lookWhite" and "lookColor" for ramps:
-- vc:setFilterRamp("lookColor", "saturation", 1, 0, av.range(0, 2)).
local presets = {
  warm = { white = { 1, 0.93, 0.82 }, saturation = 1.1, contrast = 1.05 },
  cool = { white = { 0.86, 0.94, 1 }, saturation = 0.95, contrast = 1.05 },
  mono = { saturation = 0, contrast = 1.1 },
  faded = { saturation = 0.75, contrast = 0.8, brightness = 0.04 },
  punchy = { saturation = 1.35, contrast = 1.2 },
  night = { exposure = -1.3, white = { 0.7, 0.85, 1 }, saturation = 0.5, contrast = 1.1 },
}

return {
  name = "look",
  version = "1.0.0",
  description = "Colour presets (warm, cool, mono, faded, punchy, night) as filters for vc.filters, with an amount",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "preset", type = "string", default = "warm", choices = { "warm", "cool", "mono", "faded", "punchy", "night" }, doc = "the look (see the header of `moonreel effects show look` for what each sets)" },
    { name = "amount", type = "number", min = 0, max = 1, default = 1, doc = "how much of the look: 0 the untouched picture, 1 the full preset" },
  },
  example = { preset = "warm" },

  apply = function(p)
    local preset = presets[p.preset]
    local a = p.amount
    local function mix(value, neutral) return neutral + a * ((value or neutral) - neutral) end

    local filters = {}
    local exposure = mix(preset.exposure, 0)
    if exposure ~= 0 then
      filters[#filters + 1] = av.filter("exposureAdjust", { ev = exposure, name = "lookExposure" })
    end
    if preset.white then
      local w = preset.white
      filters[#filters + 1] = av.filter("whitePointAdjust", { color = { mix(w[1], 1), mix(w[2], 1), mix(w[3], 1) }, name = "lookWhite" })
    end
    filters[#filters + 1] = av.filter("colorControls", {
      saturation = mix(preset.saturation, 1), brightness = mix(preset.brightness, 0),
      contrast = mix(preset.contrast, 1), name = "lookColor",
    })
    return filters
  end,
}
