-- A border (frame) around the whole picture: a solid band along the four edges, optionally
-- with rounded inner corners, a second thin line inside it ("double"), or a polaroid
-- print's thicker bottom edge with a caption written in it.
--
--   local border = require "effects.border"
--   parent:addSublayer(border{ renderSize = {1920, 1080} })                             -- white, 3 %
--   parent:addSublayer(border{ renderSize = {1920, 1080}, color = "black", cornerRadius = 0.04 })
--   parent:addSublayer(border{ renderSize = {1920, 1080}, style = "double", color = "#1B2A41", innerColor = "#D4AF37" })
--   parent:addSublayer(border{ renderSize = {1080, 1920}, style = "polaroid", caption = "Lisbon, 2026" })
--
-- The border is drawn over the picture's edges (the video is not made smaller): keep what
-- matters out of the outer `width` (and, for "polaroid", out of the bottom band).
-- Rounded inner corners are the inside edge of one thick rounded outline larger than the
-- frame (Core Animation draws a border's inner corner with radius cornerRadius − borderWidth),
-- so the frame's own corners stay square and filled.
return {
  name = "border",
  version = "1.0.0",
  description = "A frame around the whole picture: solid, double-lined or polaroid (thick bottom edge with a caption)",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "style", type = "string", default = "solid", choices = { "solid", "double", "polaroid" }, doc = "solid: one band; double: a band and a thin line inside it; polaroid: a band with a thicker bottom edge that takes the caption" },
    { name = "width", type = "number", min = 0.001, max = 0.25, default = 0.03, doc = "width of the band, fraction of the frame's shorter side (at least 1 pixel)" },
    { name = "color", type = "color", default = "white", doc = "colour of the band" },
    { name = "cornerRadius", type = "number", min = 0, max = 0.5, default = 0, doc = "radius of the picture's rounded corners inside the band, fraction of the shorter side; 0: square" },
    { name = "opacity", type = "number", min = 0, max = 1, default = 1, doc = "opacity of the whole border" },
    { name = "innerWidth", type = "number", min = 0.0005, max = 0.05, default = 0.004, doc = "\"double\": width of the inner line, fraction of the shorter side (at least 1 pixel)" },
    { name = "innerGap", type = "number", min = 0, max = 0.2, default = 0.012, doc = "\"double\": gap between the band and the inner line, fraction of the shorter side" },
    { name = "innerColor", type = "color", doc = "\"double\": colour of the inner line; default: the band's colour" },
    { name = "bottomWidth", type = "number", min = 0.01, max = 0.5, default = 0.14, doc = "\"polaroid\": height of the bottom edge, fraction of the shorter side" },
    { name = "caption", type = "string", doc = "\"polaroid\": text written in the bottom edge; nil for none" },
    { name = "captionColor", type = "color", default = "#333333", doc = "\"polaroid\": caption colour" },
    { name = "captionHeight", type = "number", min = 0.01, max = 0.3, default = 0.05, doc = "\"polaroid\": caption font size, fraction of the shorter side (at most what the bottom edge holds)" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "\"polaroid\": caption font family" },
  },
  example = { renderSize = { 1280, 720 }, style = "double", cornerRadius = 0.03 },

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local short = math.min(width, height)
    local band = math.max(1, math.floor(short * p.width + 0.5))
    local bottom = band
    if p.style == "polaroid" then
      bottom = math.max(band, math.floor(short * p.bottomWidth + 0.5))
      if bottom > math.floor(short * p.bottomWidth + 0.5) then
        effect.note(("the bottom edge is %d px, as wide as the others, not the %d bottomWidth gives"):format(bottom, math.floor(short * p.bottomWidth + 0.5)),
                    "give a bottomWidth of at least width")
      end
    end
    if p.caption and p.style ~= "polaroid" then
      error(('effect "border": caption is written in the polaroid\'s bottom edge: set style = "polaroid" (style is "%s")'):format(p.style), 2)
    end
    -- The picture's hole: x, y, width, height.
    local hole = { band, band, width - 2 * band, height - band - bottom }
    if hole[3] < 2 or hole[4] < 2 then
      error(('effect "border": a %d px band (%d px at the bottom) leaves nothing of a %dx%d picture'):format(band, bottom, width, height), 2)
    end
    local radius = math.min(short * p.cornerRadius, hole[3] / 2, hole[4] / 2)

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true, opacity = p.opacity, name = "border" }
    if radius < 0.5 then
      -- Four bands: top and bottom across the whole width, the sides between them.
      local below = hole[2] + hole[4]
      container:addSublayer(av.layer{ frame = { 0, 0, width, hole[2] }, backgroundColor = p.color })
      container:addSublayer(av.layer{ frame = { 0, below, width, height - below }, backgroundColor = p.color })
      container:addSublayer(av.layer{ frame = { 0, hole[2], hole[1], hole[4] }, backgroundColor = p.color })
      container:addSublayer(av.layer{ frame = { hole[1] + hole[3], hole[2], width - hole[1] - hole[3], hole[4] }, backgroundColor = p.color })
    else
      -- One outline `reach` pixels thick around the hole, with outer radius radius + reach:
      -- its inner edge is the hole with rounded corners of `radius`, and it reaches past
      -- the frame's corners (their distance from the corner arcs' centres is at most
      -- √2 · (band + radius) < radius + reach).
      local reach = math.ceil(1.5 * (math.max(band, bottom) + radius)) + 2
      container:addSublayer(av.layer{
        frame = { hole[1] - reach, hole[2] - reach, hole[3] + 2 * reach, hole[4] + 2 * reach },
        borderWidth = reach, borderColor = p.color, cornerRadius = radius + reach,
      })
    end

    if p.style == "double" then
      local gap = math.floor(short * p.innerGap + 0.5)
      local line = math.max(1, math.floor(short * p.innerWidth + 0.5))
      if hole[3] > 2 * (gap + line) and hole[4] > 2 * (gap + line) then
        container:addSublayer(av.layer{
          frame = { hole[1] + gap, hole[2] + gap, hole[3] - 2 * gap, hole[4] - 2 * gap },
          borderWidth = line, borderColor = p.innerColor or p.color,
          -- Concentric with the hole's rounded corners.
          cornerRadius = math.max(radius - gap, 0),
        })
      end
    end

    if p.caption and p.caption ~= "" then
      local size = math.max(8, math.floor(math.min(short * p.captionHeight, bottom / 1.6) + 0.5))
      if short * p.captionHeight > bottom / 1.6 then
        effect.note(("the caption is %d px high, not %d: the bottom edge (%d px) holds no more"):format(size, math.floor(short * p.captionHeight + 0.5), bottom),
                    "give a wider bottomWidth, or a smaller captionHeight")
      end
      local lineHeight = math.floor(size * 1.6 + 0.5)
      local top = hole[2] + hole[4]
      container:addSublayer(av.textLayer{
        string = p.caption, font = p.font, fontSize = size, foregroundColor = p.captionColor,
        alignmentMode = "center", name = "border caption",
        -- One line: a caption too long is drawn smaller, then cut with "…" (the export
        -- warns textTruncated, naming this layer).
        maxLines = 1, truncationMode = "end", minimumScaleFactor = 0.6,
        frame = { band, top + math.floor(math.max(0, bottom - size * 1.47) / 2), width - 2 * band, lineHeight },
      })
    end
    return container
  end,
}
