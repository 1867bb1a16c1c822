-- Song lyrics as layers: one text layer per cue, visible from its start to its finish,
-- optionally fading, with a karaoke fill that follows word timings when the cues have them
-- (LRC's enhanced <mm:ss.xx> form, ASS \k tags, WebVTT timestamp tags) and otherwise
-- sweeps across each line at an even pace over its time.
--
--   local lyrics = require "effects.lyrics"
--   parent:addSublayer(lyrics{ cues = av.readCues("song.lrc"), renderSize = {1920, 1080} })
--
-- Defaults: centred in the bottom third, white with a thin dark outline (readable on a
-- bright sky too), two lines at most, shadowed. In a vertical 9:16 frame the thirds are
-- those of the area Reels, Shorts and TikTok leave free (see safeArea).
return {
  name = "lyrics",
  version = "1.4",
  description = "Timed lyric lines (from av.readCues) drawn over the video, with fades and karaoke fill",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "cues", type = "table", required = true, doc = "cues {text=, start=, finish=, words=} from av.readCues" },
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "fontSize", type = "number", min = 1, max = 1000, doc = "pixels; default: a fourteenth of the frame's shorter side (its height in landscape, its width in portrait)" },
    { name = "fontWeight", type = "any", default = "bold", doc = "100…900, \"normal\" or \"bold\"" },
    { name = "color", type = "color", default = "white", doc = "text colour" },
    { name = "strokeColor", type = "color", default = "black", doc = "outline colour" },
    { name = "strokeWidth", type = "number", min = 0, max = 100, doc = "outline width in pixels (0: none); default: a twentieth of the font size, at least 1 (white text with only a shadow vanished on a bright sky)" },
    { name = "shadow", type = "boolean", default = true, doc = "soft dark shadow under the text" },
    { name = "position", type = "string", default = "bottom", choices = { "bottom", "middle", "top" }, doc = "which third of the frame" },
    { name = "frame", type = "table", doc = "{x, y, width, height} of the text box; overrides position" },
    { name = "safeArea", type = "boolean", doc = "keep the lines inside the area vertical-video apps leave free: not in the bottom fifth (captions, music and account names), the right eighth (buttons) or the top twelfth; default: on for frames at least 16:9 tall (9:16 shorts), off otherwise" },
    { name = "alignment", type = "string", default = "center", choices = { "left", "center", "right", "justified" }, doc = "how lines are aligned" },
    { name = "maxLines", type = "integer", min = 1, max = 20, default = 2, doc = "lines a cue may take; a longer one is first drawn smaller (minimumScaleFactor), then cut with an ellipsis and a textTruncated warning" },
    { name = "minimumScaleFactor", type = "number", min = 0.3, max = 1, default = 0.6, doc = "how far a long cue's font may shrink to fit maxLines before it is cut (0.6: to 60 % of fontSize; 1: never)" },
    { name = "fadeIn", type = "number", min = 0, max = 10, default = 0, doc = "seconds of fade-in at each line's start" },
    { name = "fadeOut", type = "number", min = 0, max = 10, default = 0, doc = "seconds of fade-out before each line's finish" },
    { name = "karaokeColor", type = "color", doc = "colour of sung words: by the cues' word times (LRC, ASS \\k, VTT), else swept evenly over each line" },
    { name = "translationScale", type = "number", min = 0.2, max = 1, default = 0.6, doc = "size of a cue's translation line (cue.translation) against the lyric's; drawn under it, not sung" },
    { name = "karaokeFill", type = "string", default = "auto", choices = { "auto", "word", "smooth" }, doc = "\"word\": each word lights at once when it starts; \"smooth\": a fill sweeps across each word over its time; \"auto\": smooth where the cues say so (ASS \\kf, \\K), else by word" },
  },
  example = { renderSize = { 1280, 720 }, karaokeColor = "#FFD400",
              cues = { { text = "Hello, summer night", start = 0.5, finish = 2.5 }, { text = "goodbye", start = 2.5, finish = 4 } } },

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    if #p.cues == 0 then
      -- A template's part whose start misses every cue rendered a video without a word.
      effect.warn("it was given no cue, so it draws no lyric", "check that the cues' times fall in the video's (a part's start and duration)")
    end
    -- Sized by the shorter side: a portrait phone video gets lines of as many words as a
    -- landscape one, not a few words cut with an ellipsis.
    local size = p.fontSize or math.max(12, math.floor(math.min(width, height) / 14))
    local margin = math.floor(width * 0.05)
    local stroke = p.strokeWidth or math.max(1, size / 20)
    -- The area the text may take: the whole frame, or the part vertical-video apps leave
    -- free (their overlays cover the bottom fifth, a column of buttons at the right edge
    -- and the top bar).
    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local area = { 0, 0, width, height }
    if safe then
      area = { 0, math.floor(height / 12), math.floor(width * 7 / 8), math.floor(height * 4 / 5) - math.floor(height / 12) }
    end
    local hasTranslations = false
    for _, cue in ipairs(p.cues) do hasTranslations = hasTranslations or cue.translation ~= nil end
    local box = p.frame
    if not box then
      local third = ({ top = 0, middle = 1, bottom = 2 })[p.position]
      -- Two lines of text, placed in the middle of the chosen third.
      local textHeight = math.floor(size * 1.35 * p.maxLines)
      local top = math.floor(area[2] + area[4] * third / 3 + (area[4] / 3 - textHeight) / 2)
      box = { area[1] + margin, top, area[3] - 2 * margin, textHeight + size }
      if hasTranslations then
        -- One line of translation under the lyric, inside the third.
        -- A line of Noto Sans CJK is 1.45 em high: at 1.4 em the translation's box was
        -- a pixel short of it, and said to overflow though drawn whole.
        local extra = math.ceil(size * p.translationScale * 1.5)
        box = { area[1] + margin, math.max(area[2], top - math.floor(extra / 2)), area[3] - 2 * margin, textHeight + extra + math.floor(size / 4) }
      end
    end

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    -- Lines that overlap in time are stacked, not drawn over each other: each takes the
    -- lowest free slot, one box higher per slot (lower, in the top third); once the lines
    -- under it are gone, it slides down to the first slot for the rest of its time.
    local slotEnds = {}
    local slide = 0.25
    local step = (p.position == "top" and not p.frame) and box[4] or -box[4]
    local shortFades = 0
    for index, cue in ipairs(p.cues) do
      local length = cue.finish - cue.start
      if length > 0 then
        if p.fadeIn > length / 2 or p.fadeOut > length / 2 then shortFades = shortFades + 1 end
        local slot = 1
        while slotEnds[slot] and slotEnds[slot] > cue.start do slot = slot + 1 end
        slotEnds[slot] = cue.finish
        local frame = { box[1], box[2] + (slot - 1) * step, box[3], box[4] }
        -- When the lines below it end (all of them, if it is higher than the second slot).
        local alone = cue.finish
        if slot > 1 then
          alone = 0
          for lower = 1, slot - 1 do alone = math.max(alone, slotEnds[lower]) end
          if alone + slide < cue.finish then
            slotEnds[1], slotEnds[slot] = cue.finish, alone
          else
            alone = cue.finish
          end
        end
        -- What a warning about this line (or its translation) names: the cue and where it was read.
        local name = "cue " .. tostring(cue.id or index) .. (cue.file and (" (" .. cue.file .. ":" .. cue.line .. ")") or "")
        local line = av.textLayer{
          string = cue.text, font = p.font, fontSize = size, fontWeight = p.fontWeight,
          foregroundColor = p.color, alignmentMode = p.alignment, isWrapped = true,
          maxLines = p.maxLines, truncationMode = "end", frame = frame, opacity = 0,
          minimumScaleFactor = p.minimumScaleFactor,
          name = name,
          strokeColor = p.strokeColor, strokeWidth = stroke,
          shadowOpacity = p.shadow and 0.8 or 0, shadowRadius = math.max(2, size / 12),
          shadowOffset = { 0, math.max(1, size / 24) },
        }
        -- Visible only inside [start, finish): the model opacity is 0 and the animation
        -- (fill mode "removed") lifts it while active.
        local fadeIn = math.min(p.fadeIn, length / 2) / length
        local fadeOut = math.min(p.fadeOut, length / 2) / length
        line:addAnimation(av.keyframeAnimation{
          keyPath = "opacity", values = { fadeIn > 0 and 0 or 1, 1, 1, fadeOut > 0 and 0 or 1 },
          keyTimes = { 0, fadeIn, 1 - fadeOut, 1 }, beginTime = cue.start, duration = length,
        }, "show")
        -- Slides `layer` (whose frame is `at`) down to the first slot once it is alone.
        local function settle(layer, at)
          if alone >= cue.finish then return end
          local x, from = at[1] + at[3] / 2, at[2] + at[4] / 2
          local to = from + box[2] - frame[2]
          layer:addAnimation(av.keyframeAnimation{
            keyPath = "position", values = { { x, from }, { x, from }, { x, to }, { x, to } },
            keyTimes = { 0, (alone - cue.start) / length, (alone + slide - cue.start) / length, 1 },
            beginTime = cue.start, duration = length,
          }, "settle")
        end
        settle(line, frame)
        if p.karaokeColor then
          line.highlightColor = p.karaokeColor
          local values, times, mode = { 0 }, { 0 }, "discrete"
          local function at(time) return math.min(math.max((time - cue.start) / length, times[#times]), 1) end
          local smooth = p.karaokeFill == "smooth"
          if p.karaokeFill == "auto" and cue.words then
            for _, word in ipairs(cue.words) do smooth = smooth or word.sweeps end
          end
          if cue.words and #cue.words > 0 and smooth then
            -- The fill sweeps across each word from its start to its finish, and holds between words.
            mode = "linear"
            for _, word in ipairs(cue.words) do
              values[#values + 1], times[#times + 1] = word.firstCharacter, at(word.start)
              values[#values + 1], times[#times + 1] = word.lastCharacter, at(word.finish)
            end
          elseif cue.words and #cue.words > 0 then
            for _, word in ipairs(cue.words) do
              values[#values + 1] = word.lastCharacter
              times[#times + 1] = at(word.start)
            end
          else
            -- No word times (CSV, plain SRT): the fill sweeps the line at an even pace.
            values, times, mode = { 0, utf8.len(cue.text) or #cue.text }, { 0, 1 }, "linear"
          end
          line:addAnimation(av.keyframeAnimation{
            keyPath = "highlightedScalars", values = values, keyTimes = times,
            calculationMode = mode, beginTime = cue.start, duration = length,
          }, "karaoke")
        end
        container:addSublayer(line)
        if cue.translation then
          -- Under the lyric's lines, in the room the box keeps below them; shown with it, never sung.
          local translationSize = math.max(8, math.floor(size * p.translationScale))
          local lineHeight = math.ceil(translationSize * 1.5)
          local belowFrame = { frame[1], frame[2] + frame[4] - lineHeight, frame[3], lineHeight }
          local below = av.textLayer{
            string = cue.translation, font = p.font, fontSize = translationSize, fontWeight = "normal", name = "translation of " .. name,
            foregroundColor = p.color, alignmentMode = p.alignment, isWrapped = true, maxLines = 1,
            truncationMode = "end", minimumScaleFactor = p.minimumScaleFactor, opacity = 0, strokeColor = p.strokeColor, strokeWidth = p.strokeWidth or math.max(1, translationSize / 20),
            frame = belowFrame,
            shadowOpacity = p.shadow and 0.8 or 0, shadowRadius = math.max(2, translationSize / 12),
            shadowOffset = { 0, math.max(1, translationSize / 24) },
          }
          below:addAnimation(av.keyframeAnimation{
            keyPath = "opacity", values = { fadeIn > 0 and 0 or 1, 1, 1, fadeOut > 0 and 0 or 1 },
            keyTimes = { 0, fadeIn, 1 - fadeOut, 1 }, beginTime = cue.start, duration = length,
          }, "show")
          settle(below, belowFrame)
          container:addSublayer(below)
        end
      end
    end
    if shortFades > 0 then
      effect.note(("%d line%s last%s less than twice fadeIn or fadeOut: each fade takes at most half its line"):format(
                    shortFades, shortFades == 1 and "" or "s", shortFades == 1 and "s" or ""), "give shorter fades")
    end
    return container
  end,
}
