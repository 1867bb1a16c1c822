-- A broadcaster's logo bug: a small logo in a corner that fades in after a few seconds
-- (a viewer sees the picture first) and, if asked, fades out again.
--
--   local logoBug = require "effects.logoBug"
--   parent:addSublayer(logoBug{ renderSize = {1920, 1080}, logo = av.image("logo.png"), corner = "topRight", delay = 3 })
return {
  name = "logoBug",
  version = "1.1.0",
  description = "A small logo in a corner of the picture, fading in after a delay",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "logo", type = "image", required = true, doc = "av.image(path) of the logo (a PNG with transparency looks best)" },
    { name = "corner", type = "string", default = "topRight", choices = { "topLeft", "topRight", "bottomLeft", "bottomRight" }, doc = "which corner" },
    { name = "size", type = "number", min = 0.02, max = 0.5, default = 0.08, doc = "logo height as a fraction of the frame's shorter side" },
    { name = "margin", type = "number", min = 0, max = 0.3, default = 0.04, doc = "distance from the edges, fraction of the shorter side" },
    { name = "opacity", type = "number", min = 0, max = 1, default = 0.8, doc = "how opaque once shown (broadcast bugs are a little see-through)" },
    { name = "delay", type = "number", min = 0, max = 36000, default = 2, doc = "seconds before it starts to fade in" },
    { name = "fade", type = "number", min = 0, max = 10, default = 0.6, doc = "seconds of each fade" },
    { name = "duration", type = "number", min = 0, max = 36000, doc = "seconds it stays once faded in, then fades out; default: to the end" },
  },
  example = { renderSize = { 1280, 720 }, delay = 0.5 },
  previewAt = 2,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local shorter = math.min(width, height)
    local logoHeight = math.max(1, math.floor(shorter * p.size + 0.5))
    local logoWidth = math.max(1, math.floor(logoHeight * p.logo.size.width / p.logo.size.height + 0.5))
    local margin = math.floor(shorter * p.margin + 0.5)
    local room = math.max(1, width - 2 * margin)
    if logoWidth > room then
      -- A wide wordmark on a portrait frame ran past the edge, cut off unsaid.
      effect.note(("the logo is %d px wide at size %g, more than the %d px the frame leaves: it is drawn %d px wide, %d px high")
                    :format(logoWidth, p.size, room, room, math.max(1, math.floor(room * logoHeight / logoWidth))),
                  "give a smaller size, or a logo less wide")
      logoHeight, logoWidth = math.max(1, math.floor(room * logoHeight / logoWidth)), room
    end
    local right = p.corner == "topRight" or p.corner == "bottomRight"
    local bottom = p.corner == "bottomLeft" or p.corner == "bottomRight"
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local bug = av.layer{
      contents = p.logo, contentsGravity = "resizeAspect", opacity = 0,
      frame = { right and width - margin - logoWidth or margin, bottom and height - margin - logoHeight or margin, logoWidth, logoHeight },
    }
    -- Hidden (opacity 0) until the delay, then faded in and held, and out after `duration`.
    local fade = math.max(p.fade, 0.001)
    local values, keyTimes, length
    if p.duration then
      length = p.delay + 2 * fade + p.duration
      values = { 0, 0, p.opacity, p.opacity, 0 }
      keyTimes = { 0, p.delay / length, (p.delay + fade) / length, (p.delay + fade + p.duration) / length, 1 }
    else
      length = p.delay + fade
      values = { 0, 0, p.opacity }
      keyTimes = { 0, p.delay / length, 1 }
    end
    local shown = av.keyframeAnimation{ keyPath = "opacity", values = values, keyTimes = keyTimes,
                                        beginTime = 0, duration = length, fillMode = "forwards" }
    shown.isRemovedOnCompletion = false
    bug:addAnimation(shown, "shown")
    container:addSublayer(bug)
    return container
  end,
}
