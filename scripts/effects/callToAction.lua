-- A call-to-action button ("Subscribe", "Shop now"): a rounded button with a word on it that
-- pops in at `start` (growing past its size and settling), pulses gently while it is shown,
-- and shrinks away at `start + duration`.
--
--   local callToAction = require "effects.callToAction"
--   parent:addSublayer(callToAction{ renderSize = {1920, 1080}, text = "Subscribe", start = 3, duration = 5 })
--   -- in a vertical video, bottom centre, in the brand's colours:
--   parent:addSublayer(callToAction{ renderSize = {1080, 1920}, text = "Shop now", position = "bottomCenter",
--                                    color = "#FFD400", textColor = "black", start = 10, duration = 4 })
--
-- The button's width follows the text (measured as drawn) unless `width` is given; a text
-- too long for the button is first drawn smaller (down to minimumScaleFactor) and otherwise
-- cut with a textTruncated warning, never silently.
-- Sizes are fractions of the frame's shorter side, so a portrait 1080x1920 video gets the
-- same button as a 1920x1080 one.
return {
  name = "callToAction",
  version = "1.0.0",
  description = "A rounded call-to-action button (\"Subscribe\") that pops in, pulses gently and leaves",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "text", type = "string", default = "Subscribe", doc = "the words on the button" },
    { name = "start", type = "number", min = 0, max = 86400, default = 1, doc = "composition time in seconds at which the button pops in" },
    { name = "duration", type = "number", min = 0.2, max = 86400, default = 4, doc = "seconds it is shown, pop-in and exit included" },
    { name = "position", type = "string", default = "bottomRight", choices = { "bottomCenter", "bottomLeft", "bottomRight", "topLeft", "topRight", "center" }, doc = "where the button sits" },
    { name = "margin", type = "number", min = 0, max = 0.4, default = 0.06, doc = "distance from the edges, fraction of the shorter side" },
    { name = "safeArea", type = "boolean", doc = "keep the button inside the area vertical-video apps leave free: above the bottom fifth (captions, account names), left of the right eighth (buttons), below the top twelfth; default: on for frames at least 16:9 tall (9:16 shorts), off otherwise" },
    { name = "color", type = "color", default = "#E62117", doc = "button colour" },
    { name = "textColor", type = "color", default = "white", doc = "text colour" },
    { name = "borderColor", type = "color", doc = "outline colour; nil for none" },
    { name = "borderWidth", type = "number", min = 0, max = 0.05, default = 0.004, doc = "outline width, fraction of the shorter side (with borderColor)" },
    { name = "textHeight", type = "number", min = 0.01, max = 0.3, default = 0.045, doc = "font size, fraction of the shorter side" },
    { name = "width", type = "number", min = 0.02, max = 1, doc = "button width, fraction of the frame width; default: fitted to the text" },
    { name = "height", type = "number", min = 0.02, max = 1, doc = "button height, fraction of the shorter side; default: 2.2 × the font size" },
    { name = "roundness", type = "number", min = 0, max = 0.5, default = 0.5, doc = "corner radius as a fraction of the button height: 0 square, 0.5 pill-shaped" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family" },
    { name = "fontWeight", type = "any", default = "bold", doc = "100…900, \"normal\" or \"bold\"" },
    { name = "minimumScaleFactor", type = "number", min = 0.3, max = 1, default = 0.7, doc = "how far the font may shrink so a long text fits the button (1: never)" },
    { name = "popDuration", type = "number", min = 0.05, max = 3, default = 0.45, doc = "seconds of the pop-in (overshoot and settle)" },
    { name = "overshoot", type = "number", min = 1, max = 1.5, default = 1.15, doc = "how far past its size the button grows while popping in" },
    { name = "exitDuration", type = "number", min = 0.05, max = 3, default = 0.3, doc = "seconds of the shrink and fade at the end" },
    { name = "pulse", type = "boolean", default = true, doc = "pulse gently while shown" },
    { name = "pulseAmount", type = "number", min = 0, max = 0.3, default = 0.05, doc = "how much bigger the button gets at each pulse (0.05: 5 %)" },
    { name = "pulsePeriod", type = "number", min = 0.2, max = 10, default = 1.2, doc = "seconds of one pulse" },
  },
  example = { renderSize = { 1280, 720 }, text = "Subscribe", start = 0.5, duration = 6 },
  previewAt = 2,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local short = math.min(width, height)
    local size = math.max(8, math.floor(short * p.textHeight + 0.5))
    local margin = math.floor(short * p.margin + 0.5)
    local buttonHeight = p.height and math.floor(short * p.height + 0.5) or math.floor(size * 2.2 + 0.5)
    local padding = math.floor(math.max(size * 0.9, buttonHeight * p.roundness * 0.8) + 0.5)

    -- The text as drawn on one line at its full size (a text layer's preferredFrameSize).
    local text = av.textLayer{ string = p.text, font = p.font, fontSize = size, fontWeight = p.fontWeight }:preferredFrameSize()
    local room = width - 2 * margin
    local buttonWidth = p.width and math.floor(width * p.width + 0.5)
      or math.floor(math.max(text.width + 2 * padding, buttonHeight * 2) + 0.5)
    buttonWidth = math.min(buttonWidth, room)
    if buttonWidth < buttonHeight / 2 or buttonHeight > height - 2 * margin then
      error(('effect "callToAction": a %dx%d button does not fit a %dx%d frame with margin %g'):format(buttonWidth, buttonHeight, width, height, p.margin), 2)
    end

    -- The area the button may take: the whole frame, or the part vertical-video apps leave
    -- free (their overlays cover the bottom fifth, a column of buttons at the right edge
    -- and the top bar).
    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local left, top, right, bottom = 0, 0, width, height
    if safe then
      top, right, bottom = math.floor(height / 12), math.floor(width * 7 / 8), math.floor(height * 4 / 5)
    end
    local x = ({ bottomLeft = left + margin, topLeft = left + margin, bottomRight = right - margin - buttonWidth, topRight = right - margin - buttonWidth })[p.position]
      or math.floor((width - buttonWidth) / 2)
    local y = (p.position == "topLeft" or p.position == "topRight") and top + margin
      or p.position == "center" and math.floor((height - buttonHeight) / 2)
      or bottom - margin - buttonHeight
    -- In the safe area a right-hand button may not be wider than what is left of the column.
    x = math.max(x, left + margin)

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    -- The holder pops in and leaves (scale about its centre); the button inside pulses.
    local holder = av.layer{ frame = { x, y, buttonWidth, buttonHeight }, opacity = 0, name = "call to action" }
    container:addSublayer(holder)
    local button = av.layer{
      frame = { 0, 0, buttonWidth, buttonHeight }, backgroundColor = p.color,
      cornerRadius = buttonHeight * p.roundness,
    }
    if p.borderColor then
      button.borderColor = p.borderColor
      button.borderWidth = math.max(1, math.floor(short * p.borderWidth + 0.5))
    end
    holder:addSublayer(button)
    -- One line, centred in the button.
    button:addSublayer(av.textLayer{
      string = p.text, font = p.font, fontSize = size, fontWeight = p.fontWeight,
      foregroundColor = p.textColor, alignmentMode = "center",
      -- One line: a text too long is drawn smaller, then cut with "…" (the export warns
      -- textTruncated, naming this layer).
      maxLines = 1, truncationMode = "end", minimumScaleFactor = p.minimumScaleFactor, name = "call to action text",
      frame = { padding / 2, math.floor((buttonHeight - text.height) / 2), buttonWidth - padding, text.height },
    })

    -- Pop in, hold, shrink away: one keyframe animation over the whole time, so the pieces
    -- cannot fight. Short durations share the time between pop-in and exit.
    local d = p.duration
    local pop, exit = p.popDuration, p.exitDuration
    if pop + exit > d then
      pop, exit = d * pop / (pop + exit), d * exit / (pop + exit)
    end
    holder:addAnimation(av.keyframeAnimation{
      keyPath = "transform.scale",
      values = { 0.01, p.overshoot, 1 - (p.overshoot - 1) / 3, 1, 1, 0.6 },
      keyTimes = { 0, 0.55 * pop / d, 0.8 * pop / d, pop / d, 1 - exit / d, 1 },
      timingFunctions = { "easeOut", "easeInEaseOut", "easeInEaseOut", "linear", "easeIn" },
      beginTime = p.start, duration = d,
    }, "popIn")
    -- Visible only inside [start, start + duration): the model opacity is 0 and the
    -- animation (fill mode "removed") lifts it while active, fading out with the exit.
    holder:addAnimation(av.keyframeAnimation{
      keyPath = "opacity", values = { 1, 1, 0 }, keyTimes = { 0, 1 - exit / d, 1 },
      beginTime = p.start, duration = d,
    }, "show")

    -- Gentle pulses between the pop-in and the exit: whole pulses only, so the button is at
    -- rest when it starts to leave.
    local pulses = math.floor((d - pop - exit) / p.pulsePeriod)
    if p.pulse and p.pulseAmount > 0 and pulses >= 1 then
      local beat = av.keyframeAnimation{
        keyPath = "transform.scale", values = { 1, 1 + p.pulseAmount, 1 }, keyTimes = { 0, 0.5, 1 },
        timingFunctions = { "easeInEaseOut", "easeInEaseOut" },
        beginTime = p.start + pop, duration = p.pulsePeriod,
      }
      beat.repeatCount = pulses
      button:addAnimation(beat, "pulse")
    end
    return container
  end,
}
