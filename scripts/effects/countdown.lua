-- A countdown: the numbers from `from` down to 1, one every `step` seconds, each popping
-- in (growing past its size and settling, while fading in) in the middle of the frame, on an
-- optional dark disc with a ring; then, if given, a final text ("GO!") the same way.
--
--   local countdown = require "effects.countdown"
--   parent:addSublayer(countdown{ renderSize = {1920, 1080}, from = 5, start = 1, finalText = "GO!" })
--
-- Number k (from `from` down) shows from start + (from − k)·step for one step, the final
-- text for one step after the 1. The disc is a square layer with rounded corners (a
-- cornerRadius of half its side) and the ring its border; the ring beats once with every
-- number. Sizes are fractions of the frame's shorter side, so portrait and landscape match.
return {
  name = "countdown",
  version = "1.0.0",
  description = "Numbers counting down, one per step, popping in over a disc with a ring; then an optional final word",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "from", type = "integer", min = 1, max = 999, default = 3, doc = "the first number shown" },
    { name = "step", type = "number", min = 0.1, max = 60, default = 1, doc = "seconds each number is shown" },
    { name = "start", type = "number", min = 0, default = 0.5, doc = "seconds: when the first number pops in" },
    { name = "finalText", type = "string", doc = "shown for one step after the 1, e.g. \"GO!\"; nil or \"\" for none" },
    { name = "size", type = "number", min = 0.02, max = 1, default = 0.3, doc = "font size of the numbers, fraction of the frame's shorter side (the final text is drawn smaller when it would not fit the disc, or the frame's width)" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family" },
    { name = "fontWeight", type = "any", default = "bold", doc = "100…900, \"normal\" or \"bold\" (900: black, where the font has it installed)" },
    { name = "color", type = "color", default = "white", doc = "colour of the numbers" },
    { name = "finalColor", type = "color", doc = "colour of the final text; default: color" },
    { name = "strokeColor", type = "color", default = "black", doc = "outline colour" },
    { name = "strokeWidth", type = "number", min = 0, max = 100, default = 0, doc = "outline width in pixels (0: none)" },
    { name = "shadow", type = "boolean", default = true, doc = "soft dark shadow under the text" },
    { name = "circle", type = "boolean", default = true, doc = "draw the disc and ring behind the numbers" },
    { name = "circleColor", type = "color", default = "black", doc = "colour of the disc" },
    { name = "circleOpacity", type = "number", min = 0, max = 1, default = 0.45, doc = "opacity of the disc (0: a ring only)" },
    { name = "circleSize", type = "number", min = 0.05, max = 1, default = 0.5, doc = "diameter of the disc, fraction of the frame's shorter side" },
    { name = "ringColor", type = "color", default = "white", doc = "colour of the ring" },
    { name = "ringWidth", type = "number", min = 0, max = 0.1, default = 0.012, doc = "width of the ring, fraction of the frame's shorter side (0: no ring)" },
    { name = "pop", type = "number", min = 0, max = 2, default = 0.6, doc = "how small a number starts (1 − pop of its size) before it grows past its size and settles; 0: no growing, a fade only" },
  },
  example = { renderSize = { 1280, 720 }, from = 3, start = 0.5, finalText = "GO!" },
  previewAt = 1,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local reference = math.min(width, height)
    local cx, cy = width / 2, height / 2
    local size = math.max(6, math.floor(reference * p.size))

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local final = (p.finalText and p.finalText:match("%S")) and p.finalText or nil
    local shown = p.from + (final and 1 or 0)
    local total = shown * p.step

    -- The disc and ring, from the first number to the end of the last step.
    local diameter = math.floor(reference * p.circleSize)
    local ring = math.floor(reference * p.ringWidth + 0.5)
    if p.circle then
      local disc = av.layer{ frame = { cx - diameter / 2, cy - diameter / 2, diameter, diameter }, cornerRadius = diameter / 2,
                             opacity = 0, name = "countdown disc" }
      disc:addSublayer(av.layer{ frame = { 0, 0, diameter, diameter }, cornerRadius = diameter / 2,
                                 backgroundColor = p.circleColor, opacity = p.circleOpacity })
      if ring > 0 then
        disc:addSublayer(av.layer{ frame = { 0, 0, diameter, diameter }, cornerRadius = diameter / 2,
                                   borderColor = p.ringColor, borderWidth = ring })
      end
      local fade = math.min(0.15, p.step / 4) / total
      disc:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 1, 1, 0 }, keyTimes = { 0, fade, 1 - fade, 1 },
                                               beginTime = p.start, duration = total }, "show")
      -- A beat with every number: a little larger, settling back within the first third.
      local beat = av.keyframeAnimation{ keyPath = "transform.scale", values = { 1.08, 1, 1 }, keyTimes = { 0, 0.3, 1 },
                                         timingFunctions = { "easeOut", "linear" }, beginTime = p.start, duration = p.step }
      beat.repeatCount = shown
      disc:addAnimation(beat, "beat")
      container:addSublayer(disc)
    end

    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the text's own line
    -- (textHeight) when a fallback font makes it taller.
    local function lineMetrics(fontSize, textHeight)
      local line = av.textLayer{ string = "Hg", font = p.font, fontSize = fontSize, fontWeight = p.fontWeight }:preferredFrameSize().height
      return line * 0.8 - fontSize * 0.72, math.max(line, textHeight) + 1
    end
    -- One text layer per number, its digits (as tall as capitals) centred on the disc.
    local function number(text, index, fontSize, color, capOffset, boxHeight)
      local top = cy - capOffset - fontSize * 0.36
      local layer = av.textLayer{
        string = text, font = p.font, fontSize = fontSize, fontWeight = p.fontWeight, foregroundColor = color,
        alignmentMode = "center", frame = { 0, math.floor(top + 0.5), width, boxHeight }, opacity = 0,
        strokeColor = p.strokeColor, strokeWidth = p.strokeWidth,
        shadowOpacity = p.shadow and 0.6 or 0, shadowRadius = math.max(2, fontSize / 14), shadowOffset = { 0, math.max(1, fontSize / 30) },
        name = "countdown " .. text,
      }
      -- Scaled about the digits' middle, not the box's.
      layer.anchorPoint = { 0.5, (cy - math.floor(top + 0.5)) / boxHeight }
      local begin = p.start + (index - 1) * p.step
      local times = { 0, 0.18, 0.32, 0.85, 1 }
      layer:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 1, 1, 1, 0 }, keyTimes = times,
                                                beginTime = begin, duration = p.step }, "show")
      if p.pop > 0 then
        layer:addAnimation(av.keyframeAnimation{
          keyPath = "transform.scale", values = { math.max(0.05, 1 - p.pop), 1 + p.pop / 5, 1, 1, 0.92 }, keyTimes = times,
          timingFunctions = { "easeOut", "easeInEaseOut", "linear", "easeIn" }, beginTime = begin, duration = p.step,
        }, "pop")
      end
      container:addSublayer(layer)
    end
    local capOffset, boxHeight = lineMetrics(size, 0)
    for k = p.from, 1, -1 do number(tostring(k), p.from - k + 1, size, p.color, capOffset, boxHeight) end
    if final then
      -- Drawn smaller when it is wider than the disc's inside (or 0.9 of the frame's width
      -- without a disc), measured as drawn (a text layer's preferredFrameSize: one line, whole).
      local function measure(fontSize)
        return av.textLayer{ string = final, font = p.font, fontSize = fontSize, fontWeight = p.fontWeight,
                             strokeColor = p.strokeColor, strokeWidth = p.strokeWidth }:preferredFrameSize()
      end
      local measured = measure(size)
      local room = p.circle and diameter * 0.8 or width * 0.9
      local fontSize = size
      if measured.width > room then
        fontSize = math.max(6, math.floor(size * room / measured.width))
        measured = measure(fontSize)
      end
      number(final, p.from + 1, fontSize, p.finalColor or p.color, lineMetrics(fontSize, measured.height))
    end
    return container
  end,
}
