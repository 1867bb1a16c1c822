-- An audiogram card for a podcast clip: cover art, the episode's title (and a subtitle),
-- the sound drawn as it plays (mirrored waveform bars, plain bars, a line or a spectrum)
-- and a progress bar, laid out for landscape, square and portrait frames.
--
--   local audiogram = require "effects.audiogram"
--   local clip = av.asset("episode-42-excerpt.m4a")
--   parent:addSublayer(audiogram{ renderSize = {1080, 1080}, sound = clip, cover = av.image("cover.jpg"),
--                                 title = "Episode 42: Night trains", subtitle = "The Slow Travel Podcast" })
--
-- The card covers the whole frame (its background is opaque unless backgroundColor has an
-- alpha). Wider than 5:4 it is landscape (cover left, text beside it, the sound below); taller
-- than 4:5 it is portrait (cover, text and sound stacked, all above the bottom fifth, where
-- Reels, Shorts and TikTok draw their captions); in between, square (stacked). Sizes are
-- fractions of the frame's shorter side. A title that does not fit on two lines is drawn
-- smaller (to 60 % of its size), then ended with "…".
-- The sound is `sound` as laid from the video's start (0 s), the way av.join or
-- insertTimeRange(…, 0) lays a clip; it is measured when the effect is applied, within
-- the effect's time limit (5 s: minutes of sound, not hours). The progress bar fills over
-- `duration` (default: the sound's own length). Without a cover, a square of the accent
-- colour stands in.
return {
  name = "audiogram",
  version = "1.0.0",
  description = "A podcast clip's card: cover, title, the sound as a waveform or spectrum, and a progress bar",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 64, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "sound", type = "asset", required = true, doc = "av.asset(path) of the clip whose sound is shown (laid from 0 s)" },
    { name = "cover", type = "image", doc = "av.image(path) of the cover art (cropped to a square); nil: a square of accentColor" },
    { name = "title", type = "string", default = "Episode 42: Night trains", doc = "the episode's title (bold, up to two lines)" },
    { name = "subtitle", type = "string", doc = "a smaller line under the title (the show, a guest); nil or \"\" for none" },
    { name = "style", type = "string", default = "mirror", choices = { "mirror", "bars", "line", "spectrum" }, doc = "how the sound is drawn: mirror: peak bars mirrored about the middle; bars: peak bars; line: the waveform of each frame; spectrum: bars by frequency" },
    { name = "bars", type = "integer", min = 4, max = 256, default = 48, doc = "bars across (mirror, bars, spectrum)" },
    { name = "window", type = "number", min = 0.5, max = 30, default = 4, doc = "mirror and bars: seconds of sound across the bars, centred on the moment playing" },
    { name = "duration", type = "number", min = 0.1, max = 86400, doc = "seconds the progress bar takes to fill; default: the sound's length" },
    { name = "backgroundColor", type = "color", default = "#161A2B", doc = "the card's colour (with an alpha, e.g. \"#161A2BCC\", the video shows through)" },
    { name = "accentColor", type = "color", default = "#F5A623", doc = "colour of the sound and of the progress bar's fill" },
    { name = "textColor", type = "color", default = "white", doc = "colour of the title" },
    { name = "subtitleColor", type = "color", default = "#AEB4C8", doc = "colour of the subtitle" },
    { name = "trackColor", type = "color", default = "#FFFFFF33", doc = "colour of the progress bar's unfilled track" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "titleSize", type = "number", min = 0.02, max = 0.2, default = 0.07, doc = "font size of the title, fraction of the frame's shorter side" },
    { name = "cornerRadius", type = "number", min = 0, max = 0.5, default = 0.06, doc = "rounding of the cover's corners, fraction of its side" },
  },
  example = { renderSize = { 1280, 720 }, title = "Episode 42: Night trains", subtitle = "The Slow Travel Podcast", style = "spectrum" },
  previewAt = 3,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local short = math.min(width, height)
    local margin = math.floor(short * 0.07 + 0.5)
    local layout = width >= height * 1.25 and "landscape" or (height >= width * 1.25 and "portrait" or "square")
    -- Portrait: nothing in the bottom fifth (the apps' captions and buttons).
    local bottom = layout == "portrait" and math.floor(height * 0.8) or height
    local duration = p.duration or p.sound.duration
    local subtitle = (p.subtitle and p.subtitle ~= "") and p.subtitle or nil

    -- Laid out from the top, y down (UIKit's way): the card flips its sublayers' geometry,
    -- so it can sit in any Core Animation tree (origin bottom-left, y up).
    local card = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true, backgroundColor = p.backgroundColor, name = "audiogram" }

    -- The cover: a square, cropped to fill, with rounded corners.
    local side = layout == "landscape" and math.min(math.floor(height * 0.46), math.floor(width * 0.34))
                 or (layout == "square" and math.floor(short * 0.38) or math.floor(width * 0.56))
    local coverX = layout == "landscape" and margin or math.floor((width - side) / 2)
    local coverY = layout == "portrait" and math.floor(height * 0.09) or margin
    card:addSublayer(av.layer{
      frame = { coverX, coverY, side, side }, contents = p.cover, contentsGravity = "resizeAspectFill",
      backgroundColor = p.cover and "#00000000" or p.accentColor, masksToBounds = true,
      cornerRadius = side * p.cornerRadius, name = "audiogram cover",
    })

    -- The text: beside the cover in landscape, under it otherwise.
    local textX = layout == "landscape" and coverX + side + math.floor(margin * 0.8) or margin
    local textWidth = width - textX - margin
    local align = layout == "landscape" and "left" or "center"
    local function lineHeight(size, weight)
      return av.textLayer{ string = "Hg", font = p.font, fontSize = size, fontWeight = weight }:preferredFrameSize().height
    end
    -- The title shrinks (to 60 %) until it takes at most two lines; then "…" ends it.
    local titleSize = math.max(8, math.floor(short * p.titleSize))
    local smallest = math.max(8, math.floor(titleSize * 0.6))
    local titleHeight
    while true do
      titleHeight = av.textLayer{ string = p.title, font = p.font, fontSize = titleSize, fontWeight = "bold", isWrapped = true }
        :preferredFrameSize(textWidth).height
      if titleHeight <= 2 * lineHeight(titleSize, "bold") + 1 or titleSize <= smallest then break end
      titleSize = math.max(smallest, math.floor(titleSize * 0.9))
    end
    if titleSize < math.max(8, math.floor(short * p.titleSize)) then
      effect.note(("the title is drawn at %d px, not %d, to fit in two lines"):format(titleSize, math.max(8, math.floor(short * p.titleSize))),
                  "shorten it, or give a smaller titleSize")
    end
    titleHeight = math.min(titleHeight, 2 * lineHeight(titleSize, "bold") + 1)
    local subtitleSize = math.max(8, math.floor(titleSize * 0.62))
    local subtitleHeight = subtitle and lineHeight(subtitleSize, "normal") + 1 or 0
    local gap = subtitle and math.floor(titleSize * 0.35) or 0
    local textHeight = titleHeight + gap + subtitleHeight
    local textY = layout == "landscape" and coverY + math.floor((side - textHeight) / 2)
                  or coverY + side + math.floor(margin * 0.6)
    card:addSublayer(av.textLayer{
      string = p.title, font = p.font, fontSize = titleSize, fontWeight = "bold", foregroundColor = p.textColor,
      isWrapped = true, maxLines = 2, truncationMode = "end", alignmentMode = align,
      frame = { textX, textY, textWidth, titleHeight }, name = "audiogram title",
    })
    if subtitle then
      card:addSublayer(av.textLayer{
        string = subtitle, font = p.font, fontSize = subtitleSize, foregroundColor = p.subtitleColor,
        truncationMode = "end", alignmentMode = align,
        frame = { textX, textY + titleHeight + gap, textWidth, subtitleHeight }, name = "audiogram subtitle",
      })
    end

    -- The progress bar along the bottom of the card's area, and the sound between the
    -- text (or cover) and it.
    -- The progress bar: a track, and a fill anchored at its left end whose width grows from
    -- 0 to the track's over `duration` (empty before, full after). Drawn here rather than by
    -- effects.progressBar: an effect cannot add another effect's layer to its own.
    local thickness = math.max(3, math.floor(short * 0.012 + 0.5))
    local barY, barLength = bottom - margin - thickness, width - 2 * margin
    card:addSublayer(av.layer{ frame = { margin, barY, barLength, thickness }, backgroundColor = p.trackColor,
                               cornerRadius = thickness / 2, name = "audiogram track" })
    local fill = av.layer{ backgroundColor = p.accentColor, cornerRadius = thickness / 2, name = "audiogram progress",
                           anchorPoint = { 0, 0.5 }, bounds = { 0, 0, 0, thickness }, position = { margin, barY + thickness / 2 } }
    local grow = av.basicAnimation{ keyPath = "bounds", fromValue = { 0, 0, 0, thickness }, toValue = { 0, 0, barLength, thickness },
                                    beginTime = 0, duration = duration, timingFunction = "linear", fillMode = "both" }
    grow.isRemovedOnCompletion = false
    fill:addAnimation(grow, "progress")
    card:addSublayer(fill)
    local soundTop = math.max(coverY + side, textY + textHeight) + math.floor(margin * 0.6)
    local soundBottom = bottom - margin - thickness - math.floor(margin * 0.5)
    local soundFrame = { margin, soundTop, width - 2 * margin, math.max(8, soundBottom - soundTop) }
    local sound
    if p.style == "spectrum" then
      sound = av.audioSpectrumLayer{ track = p.sound, bars = p.bars, colors = { p.accentColor }, frame = soundFrame, name = "audiogram sound" }
    else
      sound = av.audioWaveformLayer{ track = p.sound, style = p.style, bars = p.bars, window = p.window,
                                     colors = { p.accentColor }, frame = soundFrame, name = "audiogram sound" }
    end
    card:addSublayer(sound)
    return card
  end,
}
