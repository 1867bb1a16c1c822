-- Decoration for a picture-in-picture inset: a rounded border around it, a soft drop shadow
-- below and to the right, and an optional label under (or over) it. The inset video itself
-- is placed by av.pictureInPicture; this effect draws around the same rectangle.
--
--   local pipFrame = require "effects.pipFrame"
--   local comp, vc = av.join({ av.asset("talk.mov") })
--   -- 1. The same placement as av.pictureInPicture: give both the same corner, scale and
--   --    margin (and the inset clip's aspect ratio, width / height), and the same time.
--   local inset = av.pictureInPicture(comp, vc, { av.asset("screen.mov"), duration = 10 },
--                                     { at = 2, corner = "topRight", scale = 0.3, margin = 0.04 })
--   parent:addSublayer(pipFrame{ renderSize = vc.renderSize, corner = "topRight", scale = 0.3, margin = 0.04,
--                                aspect = 16 / 9, start = 2, duration = 10, label = "Screen" })
--   -- 2. Or any rectangle, as fractions of the frame from its top-left corner:
--   parent:addSublayer(pipFrame{ renderSize = {1920, 1080}, rect = { 0.62, 0.06, 0.32, 0.32 }, color = "#FFD400" })
--   --    av.pictureInPicture puts an inset at corner/scale/margin: its rect in pixels is
--   --    width = round(W·scale), height = round(width / aspect), gap = round(min(W, H)·margin),
--   --    x = gap (left) or W − gap − width (right), y = gap (top) or H − gap − height (bottom);
--   --    rect = { x / W, y / H, width / W, height / H }.
--
-- Leave av.pictureInPicture's own borderWidth at 0 (its default): this effect draws the
-- border. The inset's corners are square (a video track cannot be rounded), so the border's
-- rounded outer corner is kept small enough (at most 3.4 × its width) for its inside to
-- cover them. The animation tool's layers are all drawn over the composed video, inset
-- included, so the shadow cannot lie beneath it: it is drawn as an L around the bottom and
-- right edges, starting 1.5 blur radii out so that its blur does not darken the inset.
return {
  name = "pipFrame",
  version = "1.1.0",
  description = "A rounded border, a soft drop shadow and a label around a picture-in-picture inset",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "rect", type = "table", doc = "{x, y, width, height} of the inset, fractions 0…1 of the frame from its top-left corner; default: placed by corner, scale, margin and aspect as av.pictureInPicture places it" },
    { name = "corner", type = "string", default = "bottomRight", choices = { "topLeft", "topRight", "bottomLeft", "bottomRight" }, doc = "without rect: the corner, as av.pictureInPicture's" },
    { name = "scale", type = "number", min = 0.05, max = 1, default = 0.3, doc = "without rect: the inset's width as a fraction of the frame's, as av.pictureInPicture's" },
    { name = "margin", type = "number", min = 0, max = 0.5, default = 0.04, doc = "without rect: distance from the edges, fraction of the shorter side, as av.pictureInPicture's" },
    { name = "aspect", type = "number", min = 0.1, max = 10, default = 16 / 9, doc = "without rect: the inset clip's width / height (upright), e.g. 16/9, 9/16, 4/3" },
    { name = "color", type = "color", default = "white", doc = "border colour" },
    { name = "borderWidth", type = "number", min = 0, max = 0.05, default = 0.006, doc = "border width, fraction of the shorter side (drawn outside the inset; 0: no border)" },
    { name = "cornerRadius", type = "number", min = 0, max = 0.1, default = 0.012, doc = "radius of the border's outer corners, fraction of the shorter side; at most 3.4 × the border width (so the inset's square corners stay covered)" },
    { name = "shadow", type = "boolean", default = true, doc = "a soft dark shadow below and right of the inset" },
    { name = "shadowColor", type = "color", default = "black", doc = "shadow colour" },
    { name = "shadowOpacity", type = "number", min = 0, max = 1, default = 0.6, doc = "shadow opacity" },
    { name = "shadowOffset", type = "number", min = 0, max = 0.1, default = 0.015, doc = "how far the shadow reaches out below and right, fraction of the shorter side" },
    { name = "shadowRadius", type = "number", min = 0.001, max = 0.05, default = 0.008, doc = "blur radius (Gaussian standard deviation) of the shadow, fraction of the shorter side" },
    { name = "label", type = "string", doc = "a line of text under the inset (over it when there is no room under it); nil for none" },
    { name = "labelPosition", type = "string", default = "auto", choices = { "auto", "below", "above" }, doc = "where the label goes; auto: below when it fits in the frame, else above" },
    { name = "labelColor", type = "color", default = "white", doc = "label colour" },
    { name = "labelHeight", type = "number", min = 0.01, max = 0.2, default = 0.03, doc = "label font size, fraction of the shorter side" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "label font family" },
    { name = "start", type = "number", min = 0, max = 86400, default = 0, doc = "composition time in seconds from which it is shown (av.pictureInPicture's `at`)" },
    { name = "duration", type = "number", min = 0.01, max = 86400, doc = "seconds it is shown (the inset clip's duration); nil: from start on" },
  },
  example = { renderSize = { 1280, 720 }, corner = "topRight", label = "Screen share" },

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local short = math.min(width, height)
    local function round(v) return math.floor(v + 0.5) end

    -- The inset's rectangle in pixels, top-left origin.
    local x, y, w, h
    if p.rect then
      local r = p.rect
      local fx, fy, fw, fh = r[1] or r.x, r[2] or r.y, r[3] or r.width, r[4] or r.height
      local function fraction(v) return type(v) == "number" and v >= 0 and v <= 1 end
      if not (fraction(fx) and fraction(fy) and fraction(fw) and fraction(fh)) or fw <= 0 or fh <= 0 then
        error(('effect "pipFrame": rect must be {x, y, width, height}, fractions 0…1 of the frame, got {%s, %s, %s, %s}')
          :format(tostring(fx), tostring(fy), tostring(fw), tostring(fh)), 2)
      end
      if fx + fw > 1 or fy + fh > 1 then
        -- {0.7, 0.6, 0.5, 0.5} ran the frame off the right and bottom edges, unsaid.
        error(('effect "pipFrame": rect {%g, %g, %g, %g} reaches past the frame (x + width and y + height must be at most 1)')
          :format(fx, fy, fw, fh), 2)
      end
      x, y, w, h = round(fx * width), round(fy * height), round(fw * width), round(fh * height)
    else
      -- As av.pictureInPicture places an inset (PictureInPicture.insetFrame).
      w = round(width * p.scale)
      h = round(w / p.aspect)
      local gap = round(short * p.margin)
      local right, bottom = p.corner == "topRight" or p.corner == "bottomRight", p.corner == "bottomLeft" or p.corner == "bottomRight"
      x = right and width - gap - w or gap
      y = bottom and height - gap - h or gap
    end

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true, name = "pip frame" }
    local border = p.borderWidth > 0 and math.max(1, round(short * p.borderWidth)) or 0

    if p.shadow and p.shadowOpacity > 0 then
      local sigma = math.max(1, short * p.shadowRadius)
      local clear = math.ceil(1.5 * sigma)          -- keeps the blur off the inset
      local reach = math.max(1, round(short * p.shadowOffset))
      local thick = reach + math.ceil(sigma)
      -- The L: a band right of the inset (from `reach` below its top) and one under it (from
      -- `reach` right of its left edge), in a group that is blurred and made translucent.
      local gx, gy = x + reach, y + reach
      local gw, gh = w + clear + thick - reach, h + clear + thick - reach
      local group = av.layer{ frame = { gx, gy, gw, gh }, opacity = p.shadowOpacity, name = "pip shadow" }
      group.filters = { av.filter("gaussianBlur", { radius = math.min(200, sigma), name = "shadowBlur" }) }
      group:addSublayer(av.layer{ frame = { w + clear - reach, 0, thick, gh }, backgroundColor = p.shadowColor })
      group:addSublayer(av.layer{ frame = { 0, h + clear - reach, gw, thick }, backgroundColor = p.shadowColor })
      container:addSublayer(group)
    end

    if border > 0 then
      local radius = math.min(short * p.cornerRadius, 3.4 * border)
      if radius < short * p.cornerRadius then
        effect.note(("the corners are rounded %g px, not %g: a border of %d px keeps its rounding within 3.4 times its width"):format(
                      radius, short * p.cornerRadius, border), "give a wider border for rounder corners")
      end
      container:addSublayer(av.layer{
        frame = { x - border, y - border, w + 2 * border, h + 2 * border },
        borderWidth = border, borderColor = p.color, cornerRadius = radius, name = "pip border",
      })
    end

    if p.label and p.label ~= "" then
      local size = math.max(8, round(short * p.labelHeight))
      local lineHeight = round(size * 1.6)
      local gap = border + math.max(2, round(size * 0.3))
      local below = y + h + gap
      local above = y - gap - lineHeight
      local place = p.labelPosition
      if place == "auto" then place = (below + lineHeight <= height or above < 0) and "below" or "above" end
      -- As wide as the inset, widened to a third of the frame for a small one, inside the frame.
      local labelWidth = math.min(width, math.max(w, round(width / 3)))
      local lx = math.min(math.max(0, round(x + w / 2 - labelWidth / 2)), width - labelWidth)
      container:addSublayer(av.textLayer{
        string = p.label, font = p.font, fontSize = size, foregroundColor = p.labelColor,
        alignmentMode = "center", name = "pip label",
        -- One line: a label too long is drawn smaller, then cut with "…" (the export warns
        -- textTruncated, naming this layer).
        maxLines = 1, truncationMode = "end", minimumScaleFactor = 0.7,
        shadowOpacity = 0.8, shadowRadius = math.max(1, size / 10), shadowOffset = { 0, math.max(1, size / 20) },
        frame = { lx, place == "below" and below or above, labelWidth, lineHeight },
      })
    end

    if p.duration then
      -- Visible only inside [start, start + duration): the model opacity is 0 and the
      -- animation (fill mode "removed") lifts it while active.
      container.opacity = 0
      container:addAnimation(av.keyframeAnimation{
        keyPath = "opacity", values = { 1, 1 }, keyTimes = { 0, 1 }, beginTime = p.start, duration = p.duration,
      }, "show")
    elseif p.start > 0 then
      container.opacity = 0
      local show = av.basicAnimation{ keyPath = "opacity", fromValue = 1, toValue = 1, beginTime = p.start, duration = 0.01 }
      show.fillMode = "forwards"
      show.isRemovedOnCompletion = false
      container:addAnimation(show, "show")
    end
    return container
  end,
}
