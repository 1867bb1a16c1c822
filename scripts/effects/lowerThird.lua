-- A broadcast lower third: a name (large) and a role (smaller) on a coloured bar with an
-- accent strip, sliding in at `start`, holding for `duration` seconds and sliding out.
--
--   local lowerThird = require "effects.lowerThird"
--   parent:addSublayer(lowerThird{ renderSize = {1920, 1080}, name = "Ana Ribeiro",
--                                  role = "Director of Photography", start = 2, duration = 5 })
--
-- The accent strip grows first, then the bar slides out from behind it (from the left, or
-- from the right with side = "right") and back in at the end. The bar is as wide as the
-- longer of the two lines; it always sits inside the bottom third of the frame, above the
-- bottom fifth in a vertical 9:16 frame (where Reels, Shorts and TikTok draw their captions)
-- and clear of their buttons at the right edge. Text too wide for the frame is drawn
-- smaller rather than cut. Sizes are fractions of the frame's shorter side (its height in
-- landscape, its width in portrait), so a phone video gets the proportions of a TV one.
return {
  name = "lowerThird",
  version = "1.1.0",
  description = "A name and role on a coloured bar with an accent strip that slides in, holds and slides out",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "name", type = "string", default = "Ana Ribeiro", doc = "the person's name (large, bold)" },
    { name = "role", type = "string", doc = "the second, smaller line (title, place…); nil or \"\" for none" },
    { name = "start", type = "number", min = 0, default = 1, doc = "seconds: when it starts sliding in" },
    { name = "duration", type = "number", min = 0, max = 3600, default = 4, doc = "seconds it holds fully in, between sliding in and out" },
    { name = "slide", type = "number", min = 0.05, max = 5, default = 0.6, doc = "seconds sliding in (and again out)" },
    { name = "side", type = "string", default = "left", choices = { "left", "right" }, doc = "which side of the frame it sits on (and slides in from)" },
    { name = "barColor", type = "color", default = "#102A5C", doc = "colour of the bar" },
    { name = "barOpacity", type = "number", min = 0, max = 1, default = 0.92, doc = "opacity of the bar alone (the text stays opaque)" },
    { name = "accentColor", type = "color", default = "#F5A623", doc = "colour of the strip at the bar's outer edge" },
    { name = "textColor", type = "color", default = "white", doc = "colour of the name" },
    { name = "roleColor", type = "color", doc = "colour of the role line; default: textColor" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "nameSize", type = "number", min = 0.01, max = 0.3, default = 0.06, doc = "font size of the name, fraction of the frame's shorter side" },
    { name = "roleSize", type = "number", min = 0.01, max = 0.3, default = 0.036, doc = "font size of the role, fraction of the frame's shorter side" },
    { name = "margin", type = "number", min = 0, max = 0.3, default = 0.08, doc = "distance from the frame's side and bottom edges (of the free area in 9:16), fraction of the shorter side" },
    { name = "safeArea", type = "boolean", doc = "keep out of the bottom fifth and the right eighth of the frame, which vertical-video apps cover; default: on for frames at least 16:9 tall" },
  },
  example = { renderSize = { 1280, 720 }, name = "Ana Ribeiro", role = "Director of Photography", start = 0.5, duration = 4 },
  previewAt = 2,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local reference = math.min(width, height)
    local role = (p.role and p.role ~= "") and p.role or nil

    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local areaRight, areaBottom = width, height
    if safe then areaRight, areaBottom = math.floor(width * 7 / 8), math.floor(height * 4 / 5) end
    local margin = math.floor(reference * p.margin)
    local available = areaRight - 2 * margin

    -- Font sizes, shrunk together when the longer line would not fit the frame's width. Each
    -- line is measured as drawn (a text layer's preferredFrameSize: one line, whole).
    local nameSize = math.max(6, math.floor(reference * p.nameSize))
    local roleSize = math.max(6, math.floor(reference * p.roleSize))
    local askedSize = nameSize
    local nameWidth, nameHeight, roleWidth, roleHeight, needed
    for _ = 1, 3 do
      local measured = av.textLayer{ string = p.name, font = p.font, fontSize = nameSize, fontWeight = "bold" }:preferredFrameSize()
      nameWidth, nameHeight = measured.width, measured.height
      if role then
        measured = av.textLayer{ string = role, font = p.font, fontSize = roleSize, fontWeight = "normal" }:preferredFrameSize()
        roleWidth, roleHeight = measured.width, measured.height
      else
        roleWidth, roleHeight = 0, 0
      end
      local accent = math.max(3, math.floor(nameSize * 0.14 + 0.5))
      needed = math.max(nameWidth, roleWidth) + 2 * math.floor(nameSize * 0.6) + accent
      if needed <= available then break end
      local factor = available / needed
      nameSize, roleSize = math.max(4, math.floor(nameSize * factor)), math.max(4, math.floor(roleSize * factor))
    end
    if needed > available then
      effect.warn(("the bar is %d px wide, more than the %d px the frame leaves: it runs past the edge"):format(needed, available),
                  "shorten the name or role")
    elseif nameSize < askedSize then
      effect.note(("the name is drawn at %d px, not %d, so that the longer line fits the frame's width (%d px)"):format(nameSize, askedSize, available),
                  "shorten the name or role, or give a smaller nameSize")
    end

    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the text's own line when
    -- a fallback font makes it taller.
    local function lineMetrics(size, weight, textHeight)
      local line = av.textLayer{ string = "Hg", font = p.font, fontSize = size, fontWeight = weight }:preferredFrameSize().height
      return line * 0.8 - size * 0.72, math.max(line, textHeight) + 1, line
    end
    local nameCap, nameBox, nameLine = lineMetrics(nameSize, "bold", nameHeight)
    local roleCap, roleBox, roleLine = lineMetrics(roleSize, "normal", roleHeight)
    -- Each line break of the name or role ("Director of Photography\nLisbon") takes a line
    -- more: the bar held one line each, and its window cut off the rest.
    local _, nameBreaks = p.name:gsub("\n", "")
    local _, roleBreaks = (role or ""):gsub("\n", "")
    local padX = math.floor(nameSize * 0.6)
    local padTop = math.floor(nameSize * 0.42)
    local accentWidth = math.max(3, math.floor(nameSize * 0.14 + 0.5))
    local nameTop = padTop - nameCap                 -- the name's capitals start padTop down
    local nameBaseline = padTop + nameSize * 0.72 + nameBreaks * nameLine
    local roleTop, bottom
    if role then
      roleTop = nameBaseline + nameSize * 0.42 - roleCap
      bottom = roleTop + roleCap + roleSize * 0.72 + roleBreaks * roleLine + math.floor(nameSize * 0.38)
    else
      bottom = nameBaseline + math.floor(nameSize * 0.42)
    end
    local barHeight = math.floor(bottom + 0.5)
    local barWidth = math.max(nameWidth, roleWidth) + 2 * padX
    local groupWidth = barWidth + accentWidth

    -- In the bottom third: above the bottom margin, and never above two thirds of the height.
    local groupBottom = areaBottom - margin
    local groupTop = groupBottom - barHeight
    local third = math.ceil(height * 2 / 3)
    if groupTop < third then groupTop = math.min(third, areaBottom - barHeight) end
    local groupX = p.side == "right" and areaRight - margin - groupWidth or margin

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local total = 2 * p.slide + p.duration
    -- Visible only from start to the end of the slide out: the model opacity is 0 and the
    -- animation (fill mode "removed") lifts it while it runs.
    local group = av.layer{ frame = { groupX, groupTop, groupWidth, barHeight }, opacity = 0, name = "lower third" }
    group:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 1, 1 }, keyTimes = { 0, 1 },
                                              beginTime = p.start, duration = total }, "show")
    container:addSublayer(group)

    local left = p.side ~= "right"
    local strip = av.layer{ frame = { left and 0 or barWidth, 0, accentWidth, barHeight }, backgroundColor = p.accentColor }
    -- The strip grows from its middle over the first third of the slide, and shrinks back last.
    local grow = math.min(0.35 * p.slide / total, 0.5)
    strip:addAnimation(av.keyframeAnimation{
      keyPath = "transform.scale.y", values = { 0, 1, 1, 0 }, keyTimes = { 0, grow, 1 - grow, 1 },
      timingFunctions = { "easeOut", "linear", "easeIn" }, beginTime = p.start, duration = total,
    }, "grow")

    -- The bar slides out from behind the strip: a clipping window with the panel inside.
    local window = av.layer{ frame = { left and accentWidth or 0, 0, barWidth, barHeight }, masksToBounds = true }
    local panel = av.layer{ frame = { 0, 0, barWidth, barHeight } }
    panel:addSublayer(av.layer{ frame = { 0, 0, barWidth, barHeight }, backgroundColor = p.barColor, opacity = p.barOpacity })
    panel:addSublayer(av.textLayer{
      string = p.name, font = p.font, fontSize = nameSize, fontWeight = "bold", foregroundColor = p.textColor,
      alignmentMode = left and "left" or "right", frame = { padX, nameTop, nameWidth + 2, nameBox },
      name = "lower third name",
    })
    if role then
      panel:addSublayer(av.textLayer{
        string = role, font = p.font, fontSize = roleSize, fontWeight = "normal", foregroundColor = p.roleColor or p.textColor,
        alignmentMode = left and "left" or "right",
        frame = { left and padX or barWidth - padX - roleWidth - 2, roleTop, roleWidth + 2, roleBox },
        name = "lower third role",
      })
    end
    if not left then
      -- Right-aligned: the name's box ends at the right padding too.
      panel.sublayers[2].frame = { barWidth - padX - nameWidth - 2, nameTop, nameWidth + 2, nameBox }
    end
    local shown, hidden = barWidth / 2, left and -barWidth / 2 or barWidth * 1.5
    local y = barHeight / 2
    local lead = math.min(0.15 * p.slide / total, 0.25)
    local inEnd = math.min(p.slide / total, 0.5)
    panel:addAnimation(av.keyframeAnimation{
      keyPath = "position",
      values = { { hidden, y }, { hidden, y }, { shown, y }, { shown, y }, { hidden, y }, { hidden, y } },
      keyTimes = { 0, lead, inEnd, 1 - inEnd, 1 - lead, 1 },
      timingFunctions = { "linear", "easeOut", "linear", "easeIn", "linear" },
      beginTime = p.start, duration = total,
    }, "slide")
    window:addSublayer(panel)
    group:addSublayer(window)
    group:addSublayer(strip)
    return container
  end,
}
