-- A progress bar along the bottom (or top) edge of the video that fills from 0 to 100 %
-- over `duration` seconds from `start`, over a thin track.
--
--   local progressBar = require "effects.progressBar"
--   parent:addSublayer(progressBar{ renderSize = {1920, 1080}, duration = comp.duration })
--   -- a chapter's bar, on top, rounded:
--   parent:addSublayer(progressBar{ renderSize = {1080, 1920}, start = 12, duration = 30,
--                                   position = "top", color = "#FFD400", rounded = true })
--
-- The bar grows from the left by its bounds (anchor point at its left edge), so rounded
-- ends stay round. Before `start` it is empty and after `start + duration` full; with
-- showOutside = false the whole bar (track too) is shown only while it fills.
return {
  name = "progressBar",
  version = "1.0.0",
  description = "A bar along the bottom or top edge that fills from 0 to 100 % over a given time",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "duration", type = "number", min = 0.01, max = 86400, required = true, doc = "seconds the bar takes to fill (e.g. comp.duration)" },
    { name = "start", type = "number", min = 0, max = 86400, default = 0, doc = "composition time in seconds at which the bar starts filling" },
    { name = "position", type = "string", default = "bottom", choices = { "bottom", "top" }, doc = "which edge the bar runs along" },
    { name = "thickness", type = "number", min = 0.001, max = 0.5, default = 0.012, doc = "height of the bar as a fraction of the video height (at least 2 pixels)" },
    { name = "margin", type = "number", min = 0, max = 0.25, default = 0, doc = "gap between the bar and the edges (its edge and the sides), fraction of the shorter side; 0: flush, full width" },
    { name = "color", type = "color", default = "#FF3B30", doc = "colour of the filled part" },
    { name = "trackColor", type = "color", default = "#FFFFFF4D", doc = "colour of the unfilled track (\"#00000000\" for none)" },
    { name = "rounded", type = "boolean", default = false, doc = "round the ends of the bar and track (radius half the thickness)" },
    { name = "showOutside", type = "boolean", default = true, doc = "true: shown the whole time (empty before start, full after); false: only while it fills" },
  },
  example = { renderSize = { 1280, 720 }, duration = 8 },
  previewAt = 4,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local gap = math.floor(math.min(width, height) * p.margin + 0.5)
    local thick = math.max(2, math.floor(height * p.thickness + 0.5))
    local length = width - 2 * gap       -- at least half the width: margin ≤ a quarter of the shorter side
    local y = p.position == "top" and gap or height - gap - thick
    local radius = p.rounded and thick / 2 or 0

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true, name = "progress bar" }
    local group = av.layer{ frame = { 0, 0, width, height } }
    container:addSublayer(group)
    group:addSublayer(av.layer{ frame = { gap, y, length, thick }, backgroundColor = p.trackColor, cornerRadius = radius, name = "progress track" })

    -- The fill: anchored at its left edge, its width grows from 0 to the track's length.
    local fill = av.layer{ backgroundColor = p.color, cornerRadius = radius, name = "progress fill" }
    fill.anchorPoint = { 0, 0.5 }
    fill.bounds = { 0, 0, length, thick }
    fill.position = { gap, y + thick / 2 }
    local grow = av.basicAnimation{
      keyPath = "bounds", fromValue = { 0, 0, 0, thick }, toValue = { 0, 0, length, thick },
      beginTime = p.start, duration = p.duration,
    }
    grow.timingFunction = "linear"
    -- Empty before the start (backwards), full after the end (forwards, kept).
    grow.fillMode = "both"
    grow.isRemovedOnCompletion = false
    fill:addAnimation(grow, "progress")
    group:addSublayer(fill)

    if not p.showOutside then
      -- Hidden (model opacity 0) except while the animation runs.
      group.opacity = 0
      group:addAnimation(av.keyframeAnimation{
        keyPath = "opacity", values = { 1, 1 }, keyTimes = { 0, 1 }, beginTime = p.start, duration = p.duration,
      }, "show")
    end
    return container
  end,
}
