-- A title sequence: a title and an optional subtitle that come in and go out with a style
-- each: "fade", "rise" (moving up while fading in; up and away when going out), "letters"
-- (letter by letter, each fading and rising, staggered), "typewriter" (characters appearing
-- one by one; going out, removed from the end) or "none" (a cut).
--
--   local title = require "effects.title"
--   parent:addSublayer(title{ renderSize = {1920, 1080}, title = "Day one", subtitle = "Lisbon, May 2026",
--                             start = 1, duration = 4, inStyle = "letters", outStyle = "fade" })
--
-- Shown from `start` for `duration` seconds, the coming in and going out included. Long
-- lines wrap at spaces ("\n" breaks a line where you want); a word wider than the frame is
-- drawn smaller rather than cut. "letters" and "typewriter" draw each character as a layer
-- of its own, placed where the whole line would put it: fine for Latin, Greek, Cyrillic and
-- CJK; scripts whose letters join (Arabic, Devanagari) look right with "fade" and "rise".
-- Sizes are fractions of the frame's shorter side (its height in landscape, its width in
-- portrait); in a vertical 9:16 frame "top" and "bottom" stay inside the area Reels, Shorts
-- and TikTok leave free, as in effects.lyrics.
local styles = { "fade", "rise", "letters", "typewriter", "none" }
return {
  name = "title",
  version = "1.0.0",
  description = "A title and subtitle coming in and going out: fade, rise, letter by letter or typewriter",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "title", type = "string", default = "Title", doc = "the title (\"\\n\" starts another line)" },
    { name = "subtitle", type = "string", doc = "a smaller line under the title; nil or \"\" for none" },
    { name = "start", type = "number", min = 0, default = 0.5, doc = "seconds: when it starts coming in" },
    { name = "duration", type = "number", min = 0.1, max = 3600, default = 4, doc = "seconds from start until it is gone, coming in and going out included" },
    { name = "inStyle", type = "string", default = "rise", choices = styles, doc = "how it comes in" },
    { name = "outStyle", type = "string", default = "fade", choices = styles, doc = "how it goes out" },
    { name = "inDuration", type = "number", min = 0, max = 30, doc = "seconds of coming in; default: 0.6 (fade), 0.8 (rise), 0.4 + 0.05 a character (letters), 0.06 a character (typewriter); all shortened alike when in and out do not fit the duration" },
    { name = "outDuration", type = "number", min = 0, max = 30, doc = "seconds of going out; default: 0.5 (fade), 0.6 (rise), 0.3 + 0.03 a character (letters), 0.03 a character (typewriter)" },
    { name = "position", type = "string", default = "middle", choices = { "top", "middle", "bottom" }, doc = "which third of the frame it is centred in" },
    { name = "alignment", type = "string", default = "center", choices = { "left", "center", "right" }, doc = "how lines are aligned" },
    { name = "safeArea", type = "boolean", doc = "keep inside the area vertical-video apps leave free (not the bottom fifth, the right eighth or the top twelfth); default: on for frames at least 16:9 tall" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "fontWeight", type = "any", default = "bold", doc = "weight of the title: 100…900, \"normal\" or \"bold\" (the subtitle is normal)" },
    { name = "titleSize", type = "number", min = 0.01, max = 0.5, default = 0.12, doc = "font size of the title, fraction of the frame's shorter side" },
    { name = "subtitleSize", type = "number", min = 0.01, max = 0.5, default = 0.05, doc = "font size of the subtitle, fraction of the frame's shorter side" },
    { name = "color", type = "color", default = "white", doc = "colour of the title" },
    { name = "subtitleColor", type = "color", doc = "colour of the subtitle; default: color" },
    { name = "strokeColor", type = "color", default = "black", doc = "outline colour" },
    { name = "strokeWidth", type = "number", min = 0, max = 100, default = 0, doc = "outline width in pixels (0: none)" },
    { name = "shadow", type = "boolean", default = true, doc = "soft dark shadow under the text" },
  },
  example = { renderSize = { 1280, 720 }, title = "Moonreel", subtitle = "Effects that move", start = 0.5, duration = 4,
              inStyle = "letters", outStyle = "rise" },
  previewAt = 2.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local reference = math.min(width, height)
    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local area = { 0, 0, width, height }
    if safe then
      area = { 0, math.floor(height / 12), math.floor(width * 7 / 8), math.floor(height * 4 / 5) - math.floor(height / 12) }
    end
    local margin = math.floor(width * 0.06)
    local maxWidth = area[3] - 2 * margin

    -- A text's size as drawn (a text layer's preferredFrameSize: one line, whole), in the
    -- font, weight and outline of the layers that draw it; each text measured once (a line's
    -- letters repeat).
    local sizes = {}
    local function measure(text, size, weight)
      local key = size .. "/" .. tostring(weight) .. "/" .. text
      sizes[key] = sizes[key] or av.textLayer{ string = text, font = p.font, fontSize = size, fontWeight = weight,
                                               strokeColor = p.strokeColor, strokeWidth = p.strokeWidth }:preferredFrameSize()
      return sizes[key]
    end

    -- Characters as drawn: a code point with the combining marks, variation selectors and
    -- zero-width joins that follow it.
    local function characters(text)
      local list = {}
      local join = false
      for _, c in utf8.codes(text) do
        local attached = (c >= 0x300 and c <= 0x36F) or (c >= 0x1AB0 and c <= 0x1AFF) or (c >= 0x20D0 and c <= 0x20FF)
          or (c >= 0xFE00 and c <= 0xFE0F) or (c >= 0xFE20 and c <= 0xFE2F) or (c >= 0x1F3FB and c <= 0x1F3FF) or c == 0x200D
        if (attached or join) and #list > 0 then
          list[#list] = list[#list] .. utf8.char(c)
        else
          list[#list + 1] = utf8.char(c)
        end
        join = c == 0x200D
      end
      return list
    end

    -- A block (title or subtitle): its lines wrapped at spaces to the width, at a size
    -- shrunk when one word is wider than the frame.
    local function block(text, size, weight)
      local paragraphs, measured = {}, {}
      for paragraph in (text .. "\n"):gmatch("(.-)\n") do
        local list = {}
        for word in paragraph:gmatch("%S+") do list[#list + 1] = word; measured[#measured + 1] = measure(word, size, weight).width end
        paragraphs[#paragraphs + 1] = list
      end
      local space = math.max(1, measure("x x", size, weight).width - 2 * measure("x", size, weight).width)
      local widest = 0
      for _, w in ipairs(measured) do widest = math.max(widest, w) end
      if widest > maxWidth then
        size = math.max(4, math.floor(size * maxWidth / widest))
        return nil, size
      end
      local lines, index = {}, 0
      for _, list in ipairs(paragraphs) do
        local line, lineWidth = nil, 0
        for _, word in ipairs(list) do
          index = index + 1
          if line and lineWidth + space + measured[index] > maxWidth then
            lines[#lines + 1], line = line, nil
          end
          if line then line, lineWidth = line .. " " .. word, lineWidth + space + measured[index]
          else line, lineWidth = word, measured[index] end
        end
        if line then lines[#lines + 1] = line end
      end
      return { lines = lines, size = size, weight = weight }
    end
    local function laidOut(text, size, weight)
      local asked = size
      for attempt = 1, 5 do
        local result, smaller = block(text, size, weight)
        if result then
          if size < asked then
            effect.note(("%q is drawn at %d px, not %d: a word of it is wider than the frame"):format(text, size, asked),
                        "break the word, or give a smaller size")
          end
          return result
        end
        if attempt < 5 then size = smaller end
      end
      effect.warn(("%q is not drawn: a word of it is wider than the frame even at %d px"):format(text, size), "break the word")
      return { lines = {}, size = size, weight = weight }
    end
    local titleBlock = laidOut(p.title, math.max(6, math.floor(reference * p.titleSize)), p.fontWeight)
    local subtitle = (p.subtitle and p.subtitle ~= "") and p.subtitle or nil
    local subtitleBlock = subtitle and laidOut(subtitle, math.max(6, math.floor(reference * p.subtitleSize)), "normal") or nil

    -- Vertical places of the capitals' tops (see lineMetrics): capitals are 0.72 em tall,
    -- lines 1.2 em apart, the subtitle 0.4 em of the title below it.
    local rows = {}
    local y = 0
    local function stack(b, color, group)
      for i, line in ipairs(b.lines) do
        if i > 1 then y = y + b.size * 1.2 end
        rows[#rows + 1] = { text = line, size = b.size, weight = b.weight, color = color, group = group, capTop = y }
      end
      y = y + b.size * 0.72
    end
    stack(titleBlock, p.color, "title")
    if subtitleBlock and #subtitleBlock.lines > 0 then
      y = y + titleBlock.size * 0.4
      stack(subtitleBlock, p.subtitleColor or p.color, "subtitle")
    end
    local blockHeight = y
    local third = ({ top = 0, middle = 1, bottom = 2 })[p.position]
    local centreY = area[2] + area[4] * (third + 0.5) / 3
    -- Centred in its third, but kept inside the area (a tall block in the bottom third moves up).
    local inset = math.floor(area[4] * 0.06)
    local blockTop = math.max(area[2] + inset, math.min(centreY - blockHeight / 2, area[2] + area[4] - inset - blockHeight))

    -- Every line's size and, for letter styles, where each of its characters starts: the
    -- width of the line up to and with it, less its own (so kerning is kept).
    local perLetter = p.inStyle == "letters" or p.inStyle == "typewriter" or p.outStyle == "letters" or p.outStyle == "typewriter"
    for _, row in ipairs(rows) do
      local measured = measure(row.text, row.size, row.weight)
      row.width, row.height = measured.width, measured.height
      if perLetter then
        row.characters = characters(row.text)
        row.offsets, row.widths = {}, {}
        local prefix = ""
        for k, character in ipairs(row.characters) do
          prefix = prefix .. character
          row.widths[k] = measure(character, row.size, row.weight).width
          row.offsets[k] = measure(prefix, row.size, row.weight).width - row.widths[k]
        end
      end
    end

    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the row's own line when a
    -- fallback font makes it taller.
    local function lineMetrics(row)
      local line = av.textLayer{ string = "Hg", font = p.font, fontSize = row.size, fontWeight = row.weight }:preferredFrameSize().height
      return line * 0.8 - row.size * 0.72, math.max(line, row.height) + 1
    end

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local units = {}
    local function textLayer(text, row, frame)
      return av.textLayer{
        string = text, font = p.font, fontSize = row.size, fontWeight = row.weight, foregroundColor = row.color,
        frame = frame, opacity = 0, strokeColor = p.strokeColor, strokeWidth = p.strokeWidth,
        shadowOpacity = p.shadow and 0.6 or 0, shadowRadius = math.max(2, row.size / 12), shadowOffset = { 0, math.max(1, row.size / 25) },
        name = row.group .. " " .. text,
      }
    end
    -- One character of a line as a layer of its own. A character the font lacks comes from
    -- a fallback font, and alone on its line it would sit on that font's baseline, not the
    -- line's (an accented Greek letter jumped up in Noto Sans CJK). So, without an outline,
    -- the layer holds the character followed by its whole line, and only the character is
    -- coloured (the karaoke highlight of its first scalars; the line after it is drawn
    -- transparent): the same fonts on the line, so the same baseline. An outline would show
    -- the transparent line, so with strokeWidth > 0 the character is drawn alone. Two
    -- spaces come between them, the first highlighted too: ink reaching past the
    -- character's advance (the dots of ï, its shadow) is not cut where the highlight ends.
    local transparent = { 0, 0, 0, 0 }
    local function characterLayer(character, row, x, top, boxHeight, k)
      if p.strokeWidth > 0 then
        return textLayer(character, row, { math.floor(x + row.offsets[k] + 0.5), top, row.widths[k] + 2, boxHeight })
      end
      local layer = textLayer(character .. "  " .. row.text, row,
                              { math.floor(x + row.offsets[k] + 0.5), top, row.widths[k] + row.width + row.size * 2, boxHeight })
      layer.foregroundColor, layer.highlightColor = transparent, row.color
      layer.highlightedScalars = utf8.len(character) + 1
      layer.name = row.group .. " " .. character
      return layer
    end
    for _, row in ipairs(rows) do
      local x
      if p.alignment == "left" then x = area[1] + margin
      elseif p.alignment == "right" then x = area[1] + area[3] - margin - row.width
      else x = area[1] + (area[3] - row.width) / 2 end
      local capOffset, boxHeight = lineMetrics(row)
      local top = math.floor(blockTop + row.capTop - capOffset + 0.5)
      if perLetter then
        for k, character in ipairs(row.characters) do
          if character:match("%S") then
            local layer = characterLayer(character, row, x, top, boxHeight, k)
            units[#units + 1] = { layer = layer, group = row.group, size = row.size }
          else
            units[#units + 1] = { group = row.group, size = row.size }   -- a space: a tick of the typewriter
          end
        end
      else
        local layer = textLayer(row.text, row, { math.floor(x + 0.5), top, row.width + 2, boxHeight })
        units[#units + 1] = { layer = layer, group = row.group, size = row.size }
      end
    end

    -- Coming in and going out within the duration.
    local total = p.duration
    local count = #units
    local function natural(style, coming)
      if style == "fade" then return coming and 0.6 or 0.5
      elseif style == "rise" then return coming and 0.8 or 0.6
      elseif style == "letters" then return coming and 0.4 + 0.05 * (count - 1) or 0.3 + 0.03 * (count - 1)
      elseif style == "typewriter" then return (coming and 0.06 or 0.03) * count end
      return 0
    end
    local inTime = p.inStyle == "none" and 0 or (p.inDuration or natural(p.inStyle, true))
    local outTime = p.outStyle == "none" and 0 or (p.outDuration or natural(p.outStyle, false))
    if inTime + outTime > total then
      local factor = total / (inTime + outTime)
      if p.inDuration or p.outDuration then
        effect.warn(("coming in and going out take %g + %g s, more than the title's %g s: they take %g and %g s"):format(
                      inTime, outTime, total, inTime * factor, outTime * factor), "shorten inDuration or outDuration, or lengthen duration")
      end
      inTime, outTime = inTime * factor, outTime * factor
    end
    -- The seconds [from, to] of the coming in (from start) or going out (from the start of
    -- the going out) of unit `k` of `count` with `style` over `span` seconds.
    local function window(style, k, span, coming)
      if style == "letters" then
        -- Each letter takes 0.4 s coming in (0.3 going out), one after the other.
        local each = math.min(span, coming and 0.4 or 0.3)
        local step = count > 1 and (span - each) / (count - 1) or 0
        return (k - 1) * step, (k - 1) * step + each
      elseif style == "typewriter" then
        -- One character a tick; going out, the last one first (as if deleted).
        local step = span / count
        local order = coming and k - 1 or count - k
        return order * step, order * step
      elseif style == "none" then
        return 0, 0
      end
      -- fade and rise: the title over the first 80 %, the subtitle over the last 80 %.
      if perLetter then return 0, span end
      local subtitleUnit = units[k].group == "subtitle"
      return subtitleUnit and span * 0.2 or 0, subtitleUnit and span or span * 0.8
    end
    local function fraction(seconds) return math.min(math.max(seconds / total, 0), 1) end
    for k, unit in ipairs(units) do
      if unit.layer then
        local inFrom, inTo = window(p.inStyle, k, inTime, true)
        local outFrom, outTo = window(p.outStyle, k, outTime, false)
        outFrom, outTo = total - outTime + outFrom, total - outTime + outTo
        local times = { 0, fraction(inFrom), fraction(inTo), fraction(outFrom), fraction(outTo), 1 }
        for i = 2, #times do times[i] = math.max(times[i], times[i - 1]) end
        unit.layer:addAnimation(av.keyframeAnimation{
          keyPath = "opacity", values = { p.inStyle == "none" and 1 or 0, p.inStyle == "none" and 1 or 0, 1, 1,
                                          p.outStyle == "none" and 1 or 0, p.outStyle == "none" and 1 or 0 },
          keyTimes = times, beginTime = p.start, duration = total,
        }, "show")
        local rise = ({ rise = 0.3, letters = 0.35 })
        local below = (rise[p.inStyle] or 0) * unit.size
        local above = -(rise[p.outStyle] or 0) * unit.size
        if below ~= 0 or above ~= 0 then
          unit.layer:addAnimation(av.keyframeAnimation{
            keyPath = "transform.translation.y", values = { below, below, 0, 0, above, above }, keyTimes = times,
            timingFunctions = { "linear", "easeOut", "linear", "easeIn", "linear" }, beginTime = p.start, duration = total,
          }, "move")
        end
        container:addSublayer(unit.layer)
      end
    end
    return container
  end,
}
