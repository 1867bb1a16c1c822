-- A callout: a label box with a line from it to a point of the picture, marked by a dot;
-- shown from `start` for `duration` seconds. The point may follow a path (keyframes), for
-- something that moves: the dot and the end of the line follow it, the box stays.
--
--   local callout = require "effects.callout"
--   parent:addSublayer(callout{ renderSize = {1920, 1080}, text = "Our new office",
--                               target = { 0.7, 0.35 }, start = 2, duration = 4 })
--   -- following a moving subject (times in seconds of the video):
--   callout{ renderSize = {1920, 1080}, text = "Runner", start = 1, duration = 5,
--            path = { { time = 1, x = 0.2, y = 0.6 }, { time = 3, x = 0.5, y = 0.55 }, { time = 6, x = 0.8, y = 0.6 } } }
--
-- Points are fractions of the frame from its top-left corner ({0.5, 0.5}: the middle). The
-- box goes where `box` says, else beside the point towards the middle of the frame (above
-- a point in the bottom half, below one in the top half), always inside the frame. Before
-- the path's first time the point is at its first point, after its last time at its last;
-- between them it moves in a straight line from one keyframe to the next. The line is a
-- thin layer turned towards the point (there are no path layers); along a path its length
-- and angle are keyframed eight times between each two keyframes, so its end stays on the
-- dot. Sizes are fractions of the frame's shorter side.
return {
  name = "callout",
  version = "1.1.0",
  description = "A label box with a line to a point of the picture (fixed or following a path), marked by a dot",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "text", type = "string", default = "Look here", doc = "the label" },
    { name = "target", type = "table", default = { 0.62, 0.42 }, doc = "{x, y}: the point, fractions of the frame from its top-left corner; ignored with a path" },
    { name = "path", type = "table", doc = "keyframes { { time =, x =, y = }, … } that the point follows: times in seconds of the video, increasing; x and y fractions of the frame" },
    { name = "box", type = "table", doc = "{x, y}: the middle of the label box, fractions of the frame; default: beside the point, towards the middle" },
    { name = "start", type = "number", min = 0, default = 0.5, doc = "seconds: when it appears" },
    { name = "duration", type = "number", min = 0.1, max = 3600, default = 4, doc = "seconds it is shown, its fading in and out included" },
    { name = "fade", type = "number", min = 0, max = 5, default = 0.3, doc = "seconds of fading in and out" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family" },
    { name = "fontSize", type = "number", min = 0.01, max = 0.3, default = 0.045, doc = "font size of the label, fraction of the frame's shorter side" },
    { name = "textColor", type = "color", default = "#14171C", doc = "colour of the label's text" },
    { name = "boxColor", type = "color", default = "white", doc = "colour of the label box" },
    { name = "lineColor", type = "color", default = "white", doc = "colour of the line (and of the dot's ring)" },
    { name = "dotColor", type = "color", default = "#FF3B30", doc = "colour of the dot" },
    { name = "lineWidth", type = "number", min = 0.001, max = 0.05, default = 0.006, doc = "width of the line, fraction of the frame's shorter side" },
    { name = "dotSize", type = "number", min = 0.005, max = 0.2, default = 0.03, doc = "diameter of the dot, fraction of the frame's shorter side" },
  },
  example = { renderSize = { 1280, 720 }, text = "Look here", target = { 0.62, 0.42 }, start = 0.5, duration = 4 },
  previewAt = 1.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local function fractionPair(value, name)
      local x, y = value[1] or value.x, value[2] or value.y
      if type(x) ~= "number" or type(y) ~= "number" or x < 0 or x > 1 or y < 0 or y > 1 then
        error(('effect "callout": parameter %s must be {x, y} with fractions of the frame in 0…1, got {%s, %s}')
              :format(name, tostring(x), tostring(y)), 3)
      end
      return x, y
    end
    -- The point's keyframes, in pixels.
    local keys = {}
    if p.path then
      for i, key in ipairs(p.path) do
        if type(key) ~= "table" or type(key.time) ~= "number" then
          error(('effect "callout": parameter path must be a list of { time =, x =, y = }; keyframe %d has no time'):format(i), 2)
        end
        local x, y = fractionPair(key, ("path (keyframe %d)"):format(i))
        if i > 1 and key.time <= keys[i - 1].time then
          error(('effect "callout": parameter path must have increasing times; keyframe %d (%s s) is not after keyframe %d (%s s)')
                :format(i, tostring(key.time), i - 1, tostring(keys[i - 1].time)), 2)
        end
        keys[i] = { time = key.time, x = x * width, y = y * height }
      end
      if #keys == 0 then error('effect "callout": parameter path must have at least one keyframe { time =, x =, y = }', 2) end
    else
      local x, y = fractionPair(p.target, "target")
      keys[1] = { time = p.start, x = x * width, y = y * height }
    end
    local reference = math.min(width, height)
    local size = math.max(6, math.floor(reference * p.fontSize))

    -- The label measured as drawn (a text layer's preferredFrameSize: one line, whole).
    local function measure(fontSize)
      return av.textLayer{ string = p.text, font = p.font, fontSize = fontSize, fontWeight = "bold" }:preferredFrameSize()
    end
    local label = measure(size)
    local margin = math.floor(reference * 0.03)
    local padX, padY = math.floor(size * 0.55), math.floor(size * 0.38)
    -- A label wider than the frame is drawn smaller (widths grow with the size: no hinting).
    local room = width - 2 * margin - 2 * padX
    if label.width > room then
      effect.note(("the label is drawn at %d px, not %d, so that it fits the frame's width"):format(math.max(4, math.floor(size * room / label.width)), size),
                  "shorten it, or give a smaller size")
      size = math.max(4, math.floor(size * room / label.width))
      padX, padY = math.floor(size * 0.55), math.floor(size * 0.38)
      label = measure(size)
    end
    local textWidth = label.width
    -- A label of several lines ("Our new office\nopens in May") takes a line's height more for
    -- each: its second line was drawn under the box, dark on the video.
    local fontLine = av.textLayer{ string = "Hg", font = p.font, fontSize = size, fontWeight = "bold" }:preferredFrameSize().height
    local _, breaks = p.text:gsub("\n", "")
    local boxWidth, boxHeight = textWidth + 2 * padX, math.floor(size * 0.72 + 2 * padY + size * 0.25 + breaks * fontLine)

    -- Where the box goes: given, or beside the point (the middle of the path) towards the
    -- middle of the frame; kept inside the frame.
    local bx, by
    if p.box then
      bx, by = fractionPair(p.box, "box")
      bx, by = bx * width, by * height
    else
      local sx, sy = 0, 0
      for _, key in ipairs(keys) do sx, sy = sx + key.x, sy + key.y end
      sx, sy = sx / #keys, sy / #keys
      bx = sx + (sx > width / 2 and -1 or 1) * (width * 0.2 + boxWidth / 2)
      by = sy + (sy > height / 2 and -1 or 1) * height * 0.2
    end
    local keptX = math.max(margin + boxWidth / 2, math.min(width - margin - boxWidth / 2, bx))
    local keptY = math.max(margin + boxHeight / 2, math.min(height - margin - boxHeight / 2, by))
    if p.box and (math.abs(keptX - bx) >= 1 or math.abs(keptY - by) >= 1) then
      -- A box asked at 0.97 across was drawn 122 px further in, unsaid.
      effect.note(("the box asked at %d, %d would reach past the frame: it is drawn at %d, %d, inside it")
                    :format(math.floor(bx + 0.5), math.floor(by + 0.5), math.floor(keptX + 0.5), math.floor(keptY + 0.5)),
                  "give a box nearer the middle")
    end
    bx, by = keptX, keptY

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local group = av.layer{ frame = { 0, 0, width, height }, opacity = 0, name = "callout" }
    if p.fade > p.duration / 2 then
      effect.note(("fade %g s is more than half the callout's %g s: it fades for %g s each way"):format(p.fade, p.duration, p.duration / 2),
                  "give a shorter fade")
    end
    local fade = math.min(p.fade, p.duration / 2) / p.duration
    group:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 1, 1, 0 }, keyTimes = { 0, fade, 1 - fade, 1 },
                                              beginTime = p.start, duration = p.duration }, "show")
    container:addSublayer(group)

    -- The line: a thin layer from the box's middle (the box hides its first part) turned
    -- towards the point, its anchor at the box.
    local thickness = math.max(1, math.floor(reference * p.lineWidth + 0.5))
    local function towards(key)
      local dx, dy = key.x - bx, key.y - by
      return math.sqrt(dx * dx + dy * dy), math.atan(dy, dx)
    end
    local length, angle = towards(keys[1])
    local line = av.layer{ bounds = { 0, 0, length, thickness }, anchorPoint = { 0, 0.5 }, position = { bx, by },
                           backgroundColor = p.lineColor, name = "callout line" }
    line.transform = av.transform():rotated(angle)
    group:addSublayer(line)

    local diameter = math.max(4, math.floor(reference * p.dotSize + 0.5))
    local dot = av.layer{ bounds = { 0, 0, diameter, diameter }, position = { keys[1].x, keys[1].y }, cornerRadius = diameter / 2,
                          backgroundColor = p.dotColor, borderColor = p.lineColor, borderWidth = math.max(1, math.floor(diameter / 6)),
                          name = "callout dot" }
    group:addSublayer(dot)
    -- The dot pops in as the callout appears.
    dot:addAnimation(av.keyframeAnimation{ keyPath = "transform.scale", values = { 0, 1.4, 1 }, keyTimes = { 0, 0.6, 1 },
                                            timingFunctions = { "easeOut", "easeInEaseOut" }, beginTime = p.start,
                                            duration = math.max(0.2, math.min(0.5, p.duration / 4)) }, "pop")

    if #keys > 1 then
      local first, last = keys[1].time, keys[#keys].time
      local span = last - first
      local function hold(animation)
        animation.fillMode, animation.isRemovedOnCompletion = "both", false
        return animation
      end
      local points, times = {}, {}
      for _, key in ipairs(keys) do
        points[#points + 1], times[#times + 1] = { key.x, key.y }, (key.time - first) / span
      end
      dot:addAnimation(hold(av.keyframeAnimation{ keyPath = "position", values = points, keyTimes = times,
                                                   beginTime = first, duration = span }), "path")
      -- The line's length and angle at eight points of each straight piece of the path (a
      -- length and an angle moving evenly would bend its end away from the dot).
      local lengths, angles, lineTimes = {}, {}, {}
      local previous
      for i = 1, #keys do
        local pieces = i < #keys and 8 or 1
        for j = 0, pieces - 1 do
          local a, b = keys[i], keys[math.min(i + 1, #keys)]
          local f = j / 8
          local at = { x = a.x + (b.x - a.x) * f, y = a.y + (b.y - a.y) * f }
          local l, t = towards(at)
          -- Turning the short way round: no jump between −π and π.
          if previous then
            while t - previous > math.pi do t = t - 2 * math.pi end
            while previous - t > math.pi do t = t + 2 * math.pi end
          end
          previous = t
          lengths[#lengths + 1] = { 0, 0, l, thickness }
          angles[#angles + 1] = t
          lineTimes[#lineTimes + 1] = ((a.time + (b.time - a.time) * f) - first) / span
        end
      end
      line:addAnimation(hold(av.keyframeAnimation{ keyPath = "bounds", values = lengths, keyTimes = lineTimes,
                                                    beginTime = first, duration = span }), "length")
      line:addAnimation(hold(av.keyframeAnimation{ keyPath = "transform.rotation", values = angles, keyTimes = lineTimes,
                                                    beginTime = first, duration = span }), "angle")
    end

    -- The box and its label, above the line.
    local box = av.layer{ frame = { math.floor(bx - boxWidth / 2 + 0.5), math.floor(by - boxHeight / 2 + 0.5), boxWidth, boxHeight },
                          backgroundColor = p.boxColor, cornerRadius = math.floor(size * 0.22), name = "callout box" }
    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the label's own line when
    -- a fallback font makes it taller. Capitals sit in the middle of the label box.
    local capOffset, lineBox = fontLine * 0.8 - size * 0.72, math.max(fontLine, label.height) + 1
    box:addSublayer(av.textLayer{
      string = p.text, font = p.font, fontSize = size, fontWeight = "bold", foregroundColor = p.textColor,
      alignmentMode = "center", frame = { padX - 1, math.floor((boxHeight - breaks * fontLine - size * 0.72) / 2 - capOffset + 0.5), textWidth + 2, lineBox },
      name = "callout label",
    })
    group:addSublayer(box)
    return container
  end,
}
