-- Word-by-word captions in the style of TikTok and Reels: a page of one to three short
-- lines at a time, the word being spoken in another colour and a little larger.
--
--   local captions = require "effects.captions"
--   parent:addSublayer(captions{ cues = av.readCues("talk.srt"), renderSize = {1080, 1920},
--                                activeColor = "#FFE600", uppercase = true })
--
-- Word times come from the cues (`words`, as av.readCues reads them from enhanced LRC,
-- WebVTT timestamp tags or ASS \k tags: syllables of one word light it together); a cue
-- without them is split at spaces and its time shared evenly among its words. Text written
-- without spaces (Chinese, Japanese, Thai) is split where its timed words start, or without
-- word times into characters. A page holds the words of one cue that fit `lines` lines of
-- at most `wordsPerLine` words; it shows from its first word's start to its last word's
-- finish. Each word is a text layer of its own, placed from the measured widths of the
-- words, and one more layer of each page draws the word being spoken over it.
--
-- Defaults: heavy white letters with a thick black outline and a shadow, readable on any
-- picture, centred in the bottom third. In a vertical 9:16 frame the thirds are those of the
-- area Reels, Shorts and TikTok leave free: not the bottom fifth (their captions, music and
-- account names), the right eighth (their buttons) or the top twelfth, as in effects.lyrics.
return {
  name = "captions",
  version = "1.0.0",
  description = "Word-by-word captions from timed cues: a page of lines with the spoken word highlighted and enlarged",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "cues", type = "table", required = true, doc = "cues {text=, start=, finish=, words=} from av.readCues (words: {text=, start=, finish=, firstCharacter=, lastCharacter=})" },
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "lines", type = "integer", min = 1, max = 3, default = 2, doc = "lines shown at a time (a page)" },
    { name = "wordsPerLine", type = "integer", min = 1, max = 30, default = 4, doc = "at most this many words on a line (fewer when they do not fit the width)" },
    { name = "position", type = "string", default = "bottom", choices = { "bottom", "middle", "top" }, doc = "which third of the frame (of the free area in 9:16) the page is centred in" },
    { name = "safeArea", type = "boolean", doc = "keep inside the area vertical-video apps leave free (not the bottom fifth, the right eighth or the top twelfth); default: on for frames at least 16:9 tall" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "fontSize", type = "number", min = 4, max = 1000, doc = "pixels; default: a thirteenth of the frame's shorter side; drawn smaller when a single word is wider than the frame" },
    { name = "fontWeight", type = "any", default = "bold", doc = "100…900, \"normal\" or \"bold\" (900: black, where the font has it installed)" },
    { name = "color", type = "color", default = "white", doc = "colour of the words not being spoken" },
    { name = "activeColor", type = "color", default = "#FFE600", doc = "colour of the word being spoken" },
    { name = "activeScale", type = "number", min = 0.5, max = 2, default = 1.15, doc = "size of the word being spoken against the others (1: the same)" },
    { name = "uppercase", type = "boolean", default = false, doc = "show the words in capitals (Latin, Greek and Cyrillic letters)" },
    { name = "strokeColor", type = "color", default = "black", doc = "outline colour" },
    { name = "strokeWidth", type = "number", min = 0, max = 100, doc = "outline width in pixels (0: none); default: a twelfth of the font size" },
    { name = "shadow", type = "boolean", default = true, doc = "soft dark shadow under the words" },
    { name = "lineHeight", type = "number", min = 0.8, max = 3, default = 1.25, doc = "distance between lines, in font sizes" },
  },
  example = { renderSize = { 1280, 720 }, uppercase = true,
              cues = { { text = "Every word lights up as it is spoken", start = 0.5, finish = 3.5 },
                       { text = "then the next line comes", start = 3.5, finish = 6 } } },
  previewAt = 1.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local reference = math.min(width, height)

    -- Capitals for Latin (with Latin-1 and Extended-A accents), Greek and Cyrillic:
    -- string.upper changes ASCII letters only.
    local function upper(text)
      local out = {}
      for _, c in utf8.codes(text) do
        if c >= 0x61 and c <= 0x7A then c = c - 32
        elseif (c >= 0xE0 and c <= 0xFE and c ~= 0xF7) then c = c - 32
        elseif c == 0xFF then c = 0x178
        elseif c >= 0x100 and c <= 0x17E and c ~= 0x130 and c ~= 0x131 and c ~= 0x138 and c ~= 0x149 then
          -- Pairs: even capital, odd small (0x139…0x148 and 0x179…0x17E the other way round).
          local odd = (c >= 0x139 and c <= 0x148) or (c >= 0x179 and c <= 0x17E)
          if odd then if c % 2 == 0 then c = c - 1 end elseif c % 2 == 1 then c = c - 1 end
        elseif c >= 0x3B1 and c <= 0x3C9 and c ~= 0x3C2 then c = c - 32
        elseif c == 0x3C2 then c = 0x3A3
        elseif c >= 0x430 and c <= 0x44F then c = c - 32
        elseif c >= 0x450 and c <= 0x45F then c = c - 80
        end
        out[#out + 1] = utf8.char(c)
      end
      return table.concat(out)
    end

    -- Characters of scripts written without spaces between words: CJK (not Hangul), kana,
    -- their punctuation and full-width forms, Thai.
    local function unspaced(c)
      return (c >= 0x2E80 and c <= 0x9FFF) or (c >= 0xF900 and c <= 0xFAFF) or (c >= 0xFF00 and c <= 0xFFEF)
        or (c >= 0x0E00 and c <= 0x0E7F) or (c >= 0x20000 and c <= 0x3FFFF)
    end

    -- The words of a cue with their times: whitespace-separated words of its text, each
    -- from the first to the last of the timed words (or syllables) it holds. Made again
    -- when needed rather than kept for every cue (see "Pages" below).
    local function wordsOf(cue, index)
      local problem = type(cue) ~= "table" and "is not a table"
        or type(cue.text) ~= "string" and "has no text"
        or type(cue.start) ~= "number" and "has no start"
        or type(cue.finish) ~= "number" and "has no finish"
      if problem then
        error(('effect "captions": parameter cues: cue %d %s (a cue is { text =, start =, finish = }: a string and seconds)'):format(index, problem), 3)
      end
      local words = {}
      local timed = type(cue.words) == "table" and #cue.words > 0 and cue.words or nil
      local spans = timed and timed[1].firstCharacter ~= nil
      if timed and not spans then
        -- Timed words without character positions: each is one word.
        for i, word in ipairs(timed) do
          local text = tostring(word.text or ""):match("^%s*(.-)%s*$")
          local finish = word.finish or (timed[i + 1] and timed[i + 1].start) or cue.finish
          if text ~= "" then words[#words + 1] = { text = text, start = word.start or cue.start, finish = finish } end
        end
      else
        -- Words of the text with their code point ranges [first, last). Scripts written
        -- without spaces (Chinese, Japanese, Thai) are split where a timed word starts, or
        -- without word times into characters; such pieces join with no space between them.
        local starts = {}
        if spans then for _, unit in ipairs(timed) do starts[unit.firstCharacter or -1] = true end end
        local position, current, previous = 0, nil, nil
        for byte, c in utf8.codes(cue.text) do
          local space = c == 0x20 or c == 0x09 or c == 0x0A or c == 0x0D or c == 0x3000 or c == 0xA0
          if space then
            if current then words[#words + 1], current = current, nil end
          else
            if current and (unspaced(c) or unspaced(previous)) and (not spans or starts[position]) then
              words[#words + 1], current = current, { first = position, from = byte, joined = true }
            end
            if not current then current = { first = position, from = byte } end
            current.last, current.to = position + 1, byte + #utf8.char(c) - 1
          end
          position, previous = position + 1, c
        end
        if current then words[#words + 1] = current end
        for i, word in ipairs(words) do
          word.text = cue.text:sub(word.from, word.to)
          if spans then
            for j, unit in ipairs(timed) do
              local first, last = unit.firstCharacter or 0, unit.lastCharacter or 0
              if first < word.last and last > word.first then
                local finish = unit.finish or (timed[j + 1] and timed[j + 1].start) or cue.finish
                word.start = math.min(word.start or math.huge, unit.start or cue.start)
                word.finish = math.max(word.finish or -math.huge, finish)
              end
            end
          end
          if not word.start then
            -- No time of its own: its share of the cue, evenly.
            local share = (cue.finish - cue.start) / #words
            word.start, word.finish = cue.start + (i - 1) * share, cue.start + i * share
          end
        end
      end
      for _, word in ipairs(words) do
        if p.uppercase then word.text = upper(word.text) end
        word.finish = math.max(word.finish, word.start)
      end
      return words
    end

    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local area = { 0, 0, width, height }
    if safe then
      area = { 0, math.floor(height / 12), math.floor(width * 7 / 8), math.floor(height * 4 / 5) - math.floor(height / 12) }
    end
    local margin = math.floor(width * 0.06)
    local lineWidth = area[3] - 2 * margin

    -- Each distinct word measured once as drawn (a text layer's preferredFrameSize: one line,
    -- whole), with the width of a space; the tallest line too (a fallback font's may be).
    local size = p.fontSize or math.max(8, math.floor(reference / 13))
    local distinct, order = {}, { "x", "x x" }
    for index, cue in ipairs(p.cues) do
      for _, word in ipairs(wordsOf(cue, index)) do
        if not distinct[word.text] then distinct[word.text] = true; order[#order + 1] = word.text end
      end
    end
    local widths, space, tallest
    local function measureAll()
      local measuring = { font = p.font, fontSize = size, fontWeight = p.fontWeight,
                          strokeColor = p.strokeColor, strokeWidth = p.strokeWidth or math.max(1, size / 12) }
      widths, tallest = {}, 0
      for _, text in ipairs(order) do
        measuring.string = text
        local measured = av.textLayer(measuring):preferredFrameSize()
        widths[text], tallest = measured.width, math.max(tallest, measured.height)
      end
      space = math.max(1, widths["x x"] - 2 * widths["x"])
    end
    measureAll()
    -- A word wider than a line (with room for its enlargement): every word is drawn smaller.
    local widest = 0
    for i = 3, #order do widest = math.max(widest, widths[order[i]]) end
    local grown = math.max(1, p.activeScale)
    if widest * grown > lineWidth then
      local asked = size
      size = math.max(4, math.floor(size * lineWidth / (widest * grown)))
      measureAll()
      effect.note(("every caption is drawn at %d px, not %d: its widest word is wider than a line"):format(size, asked),
                  "break the word, or give a smaller fontSize")
    end
    local stroke = p.strokeWidth or math.max(1, size / 12)
    -- Words are a space and an outline apart, and each takes room for its enlarged size, so
    -- that, spoken, it keeps at least half a space from its neighbours' outlines.
    local gap = space + math.ceil(stroke)
    local function room(word)
      local w = widths[word.text]
      return w + math.max(0, math.ceil(w * (grown - 1) - space))
    end

    -- Pages: the words of a cue in lines of at most wordsPerLine words that fit the width,
    -- `lines` lines a page. They are made and drawn one cue at a time, and nothing of a cue
    -- is kept once its layers exist: every call into the engine costs the effect a step of
    -- its garbage collector, whose work grows with what the effect keeps (a transcript of
    -- 400 cues kept whole took twice as long).
    local function pagesOf(words)
      local pages, page, line = {}, nil, nil
      for _, word in ipairs(words) do
        local w = room(word)
        -- A piece joined to the one before (no space between) is not a word of its own.
        local before = word.joined and 0 or gap
        if line and ((not word.joined and line.count >= p.wordsPerLine) or line.width + before + w > lineWidth) then line = nil end
        if not line then
          if not page or #page.lines >= p.lines then
            page = { lines = {} }
            pages[#pages + 1] = page
          end
          line = { words = {}, width = 0, count = 0 }
          page.lines[#page.lines + 1] = line
          before = 0
        end
        line.words[#line.words + 1] = word
        word.before = before
        line.width = line.width + before + w
        if not word.joined then line.count = line.count + 1 end
      end
      return pages
    end

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local third = ({ top = 0, middle = 1, bottom = 2 })[p.position]
    local centreY = area[2] + area[4] * (third + 0.5) / 3
    local centreX = area[1] + area[3] / 2
    local pitch = math.floor(size * p.lineHeight + 0.5)
    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the tallest word's when a
    -- fallback font makes it taller.
    local fontLine = av.textLayer{ string = "Hg", font = p.font, fontSize = size, fontWeight = p.fontWeight }:preferredFrameSize().height
    local capTop, boxHeight = fontLine * 0.8 - size * 0.72, math.max(fontLine, tallest) + 1
    local inkMiddle = capTop + size * 0.36
    local style = {
      font = p.font, fontSize = size, fontWeight = p.fontWeight, strokeColor = p.strokeColor, strokeWidth = stroke,
      shadowOpacity = p.shadow and 0.7 or 0, shadowRadius = math.max(2, size / 10), shadowOffset = { 0, math.max(1, size / 20) },
    }
    -- Each layer made in one call, with all its properties: every call into the engine
    -- costs the effect a step of its garbage collector, which dominates a long transcript.
    local function wordLayer(text, frame, color, name)
      style.string, style.frame, style.foregroundColor, style.name = text, frame, color, name
      return av.textLayer(style)
    end
    local pop = 0.08
    local number = 0
    local function draw(page)
      number = number + 1
      local lastLine = page.lines[#page.lines]
      local first, last = page.lines[1].words[1], lastLine.words[#lastLine.words]
      local from, to = first.start, math.max(last.finish, first.start)
      if to > from then
        local span = to - from
        local function at(time) return math.min(math.max((time - from) / span, 0), 1) end
        -- The page: visible only from its first word's start to its last word's finish (the
        -- model opacity is 0 and the animation, fill mode "removed", lifts it while it runs).
        local group = av.layer{ frame = { 0, 0, width, height }, opacity = 0, name = "caption page " .. number }
        group:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 1, 1 }, keyTimes = { 0, 1 },
                                                  beginTime = from, duration = span }, "show")
        -- Each word as a layer of its own, hidden while it is spoken; one more layer above
        -- them all is the spoken word: its text, place and size change from word to word
        -- (discrete keyframes), and it pops to activeScale as each word starts.
        local steps = {}        -- { time =, word =, frame =, shown = }, in time order
        local layers = {}
        local scales, scaleTimes = {}, {}
        for row, line in ipairs(page.lines) do
          local middle = centreY + (row - (#page.lines + 1) / 2) * pitch
          local top = math.floor(middle - inkMiddle + 0.5)
          local x = centreX - line.width / 2
          for _, word in ipairs(line.words) do
            x = x + word.before
            local w = widths[word.text]
            local frame = { math.floor(x + (room(word) - w) / 2 + 0.5), top, w + 2, boxHeight }
            local plain = wordLayer(word.text, frame, p.color, "caption word " .. word.text)
            local length = word.finish - word.start
            if length > 0 then
              plain:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 0 }, keyTimes = { 0, 1 },
                                                        beginTime = word.start, duration = length }, "spoken")
              -- A step that starts when the one before does replaces it (a word ending as
              -- the next starts leaves no gap).
              for _, step in ipairs({ { time = at(word.start), word = word.text, frame = frame, shown = 1 },
                                      { time = at(word.finish), word = word.text, frame = frame, shown = 0 } }) do
                if #steps > 0 and steps[#steps].time >= step.time then steps[#steps] = nil end
                steps[#steps + 1] = step
              end
              scales[#scales + 1], scaleTimes[#scaleTimes + 1] = 1, at(word.start)
              scales[#scales + 1], scaleTimes[#scaleTimes + 1] = p.activeScale, at(word.start + math.min(pop, length / 2))
              scales[#scales + 1], scaleTimes[#scaleTimes + 1] = p.activeScale, at(word.finish)
            end
            layers[#layers + 1] = plain
            x = x + room(word)
          end
        end
        if #steps > 0 then
          local strings, places, sizes, shown, times = {}, {}, {}, {}, {}
          for i, step in ipairs(steps) do
            strings[i], shown[i], times[i] = step.word, step.shown, i == 1 and 0 or step.time
            places[i] = { step.frame[1] + step.frame[3] / 2, step.frame[2] + step.frame[4] / 2 }
            sizes[i] = { 0, 0, step.frame[3], step.frame[4] }
          end
          times[#times + 1] = 1
          local spoken = wordLayer(strings[1], steps[1].frame, p.activeColor, "caption spoken word")
          spoken.opacity = 0
          for key, values in pairs({ string = strings, position = places, bounds = sizes, opacity = shown }) do
            spoken:addAnimation(av.keyframeAnimation{ keyPath = key, values = values, keyTimes = times, calculationMode = "discrete",
                                                       beginTime = from, duration = span }, key)
          end
          if p.activeScale ~= 1 then
            scaleTimes[1] = 0
            for i = 2, #scaleTimes do scaleTimes[i] = math.max(scaleTimes[i], scaleTimes[i - 1]) end
            scales[#scales + 1], scaleTimes[#scaleTimes + 1] = 1, 1
            spoken:addAnimation(av.keyframeAnimation{ keyPath = "transform.scale", values = scales, keyTimes = scaleTimes,
                                                       beginTime = from, duration = span }, "pop")
          end
          layers[#layers + 1] = spoken
        end
        group.sublayers = layers
        container:addSublayer(group)
      end
    end
    for index, cue in ipairs(p.cues) do
      for _, page in ipairs(pagesOf(wordsOf(cue, index))) do draw(page) end
    end
    return container
  end,
}
