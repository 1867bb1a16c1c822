-- A news ticker: a band along the bottom (or top) of the frame with a text crawling from
-- right to left, repeated so that the band never empties, and an optional label box at its
-- left end ("BREAKING").
--
--   local ticker = require "effects.ticker"
--   parent:addSublayer(ticker{ renderSize = {1920, 1080}, label = "BREAKING",
--                              text = "Markets close higher · Storm warning for the coast", speed = 0.12 })
--
-- `speed` is a fraction of the frame's width per second (0.12: a letter crosses the frame in
-- about 8 s, at any resolution). The band slides in at `start` already full of text and
-- crawls until `start + duration` (or the end of the video), then slides away. Each copy
-- of the text is one layer, and the strip of copies moves by exactly one copy per loop, so
-- the crawl is seamless; the text is measured, not guessed. In a vertical 9:16 frame the
-- bottom band sits above the bottom fifth, which Reels, Shorts and TikTok cover.
return {
  name = "ticker",
  version = "1.0.0",
  description = "A news ticker band with text crawling right to left, repeated without gaps, and a label box",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "text", type = "string", default = "Moonreel news ticker", doc = "the crawling text (one line; line breaks become spaces)" },
    { name = "separator", type = "string", default = "  •  ", doc = "put between repeats of the text" },
    { name = "label", type = "string", doc = "text of the box at the band's left end, e.g. \"BREAKING\"; nil or \"\" for none" },
    { name = "speed", type = "number", min = 0.005, max = 5, default = 0.12, doc = "crawl speed: fraction of the frame's width per second" },
    { name = "start", type = "number", min = 0, default = 0, doc = "seconds: when the band slides in" },
    { name = "duration", type = "number", min = 0, doc = "seconds it stays before sliding away; default: to the end of the video" },
    { name = "position", type = "string", default = "bottom", choices = { "bottom", "top" }, doc = "which edge the band runs along" },
    { name = "bandHeight", type = "number", min = 0.02, max = 0.3, default = 0.075, doc = "height of the band, fraction of the frame's shorter side (the text is 55 % of it)" },
    { name = "bandColor", type = "color", default = "#0E1B33", doc = "colour of the band" },
    { name = "bandOpacity", type = "number", min = 0, max = 1, default = 0.9, doc = "opacity of the band alone" },
    { name = "textColor", type = "color", default = "white", doc = "colour of the crawling text" },
    { name = "labelColor", type = "color", default = "#D7141A", doc = "colour of the label box" },
    { name = "labelTextColor", type = "color", default = "white", doc = "colour of the label's text" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family (fontconfig falls back per glyph)" },
    { name = "margin", type = "number", min = 0, max = 0.3, default = 0, doc = "distance of the band from its edge of the frame (of the free area in 9:16), fraction of the frame's height" },
    { name = "safeArea", type = "boolean", doc = "keep out of the bottom fifth and the top twelfth, which vertical-video apps cover; default: on for frames at least 16:9 tall" },
  },
  example = { renderSize = { 1280, 720 }, label = "BREAKING",
              text = "Moonreel ships a ticker effect · Text crawls right to left without a gap · Any length, any speed" },
  previewAt = 2,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local text = p.text:gsub("[\r\n\t]+", " ")
    if not text:match("%S") then error('effect "ticker": parameter text must have something to show, got "' .. p.text .. '"', 2) end
    local reference = math.min(width, height)
    local label = (p.label and p.label:match("%S")) and p.label or nil

    local bandHeight = math.max(8, math.floor(reference * p.bandHeight))
    local size = math.max(6, math.floor(bandHeight * 0.55))
    local safe = p.safeArea
    if safe == nil then safe = height >= width * 16 / 9 - 1 end
    local top, bottom = 0, height
    if safe then top, bottom = math.floor(height / 12), math.floor(height * 4 / 5) end
    local margin = math.floor(height * p.margin)
    local bandY = p.position == "top" and top + margin or bottom - margin - bandHeight

    -- Texts measured as drawn (a text layer's preferredFrameSize: one line, whole).
    local function measure(s)
      return av.textLayer{ string = s, font = p.font, fontSize = size, fontWeight = "bold" }:preferredFrameSize()
    end
    -- One copy of the text with its separator: the period of the crawl is how much longer
    -- two copies are than one (kerning across the joint included).
    local segment = text .. p.separator
    local copy = measure(segment)
    local copyWidth = copy.width
    local period = measure(segment .. segment).width - copyWidth
    if period > 15000 then
      error(('effect "ticker": parameter text is too long for one band (%d px at %d px; at most 15000): split it'):format(period, size), 2)
    end
    local labelSize = label and measure(label)
    local labelWidth = label and labelSize.width + 2 * math.floor(size * 0.6) or 0

    -- Where capitals start below the top of a text layer's box, and how tall the box must
    -- be: the baseline lies 0.8 of the font's line ("Hg") down and capitals are 0.72 em tall,
    -- in Noto Sans CJK and DejaVu alike; the box holds the line, or the texts' own lines when
    -- a fallback font makes them taller. The text sits with its capitals' middle on the
    -- band's middle.
    local fontLine = measure("Hg").height
    local capOffset = fontLine * 0.8 - size * 0.72
    local boxHeight = math.max(fontLine, copy.height, labelSize and labelSize.height or 0) + 1
    local textTop = math.floor((bandHeight - size * 0.72) / 2 - capOffset + 0.5)

    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local band = av.layer{ frame = { 0, bandY, width, bandHeight }, name = "ticker" }
    band:addSublayer(av.layer{ frame = { 0, 0, width, bandHeight }, backgroundColor = p.bandColor, opacity = p.bandOpacity })

    -- The crawl: a window right of the label, and in it a strip of copies moving left by one
    -- period per loop, forever.
    local crawlX = labelWidth
    local visible = width - crawlX
    local copies = math.ceil(visible / period) + 1
    local window = av.layer{ frame = { crawlX, 0, visible, bandHeight }, masksToBounds = true }
    local strip = av.layer{ frame = { 0, 0, copies * period, bandHeight } }
    for i = 0, copies - 1 do
      strip:addSublayer(av.textLayer{
        string = segment, font = p.font, fontSize = size, fontWeight = "bold", foregroundColor = p.textColor,
        frame = { i * period, textTop, copyWidth + 2, boxHeight }, name = "ticker text",
      })
    end
    local pixelsPerSecond = p.speed * width
    local x, y = copies * period / 2, bandHeight / 2
    local crawl = av.basicAnimation{ keyPath = "position", fromValue = { x, y }, toValue = { x - period, y },
                                     duration = period / pixelsPerSecond, beginTime = p.start }
    crawl.repeatCount = math.huge
    crawl.timingFunction = "linear"
    strip:addAnimation(crawl, "crawl")
    window:addSublayer(strip)
    band:addSublayer(window)

    if label then
      band:addSublayer(av.layer{ frame = { 0, 0, labelWidth, bandHeight }, backgroundColor = p.labelColor })
      band:addSublayer(av.textLayer{
        string = label, font = p.font, fontSize = size, fontWeight = "bold", foregroundColor = p.labelTextColor,
        alignmentMode = "center", frame = { 0, textTop, labelWidth, boxHeight }, name = "ticker label",
      })
    end

    -- Slides in from its edge and fades in at start (already full), and away after
    -- duration; the model opacity is 0, so it is not there before start.
    local slide = 0.4
    local away = p.position == "top" and -bandHeight or bandHeight
    local shown, hidden = { width / 2, bandY + bandHeight / 2 }, { width / 2, bandY + bandHeight / 2 + away }
    band.opacity = 0
    if p.duration then
      local length = 2 * slide + p.duration
      local cut = slide / length
      local times = { 0, cut, 1 - cut, 1 }
      band:addAnimation(av.keyframeAnimation{ keyPath = "position", values = { hidden, shown, shown, hidden }, keyTimes = times,
                                               timingFunctions = { "easeOut", "linear", "easeIn" },
                                               beginTime = p.start, duration = length }, "slide")
      band:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 0, 1, 1, 0 }, keyTimes = times,
                                               beginTime = p.start, duration = length }, "show")
    else
      -- Held at the end of the slide in for the rest of the video.
      for key, animation in pairs({
        slide = av.basicAnimation{ keyPath = "position", fromValue = hidden, toValue = shown, duration = slide, beginTime = p.start },
        show = av.basicAnimation{ keyPath = "opacity", fromValue = 0, toValue = 1, duration = slide, beginTime = p.start },
      }) do
        animation.fillMode, animation.isRemovedOnCompletion = "forwards", false
        animation.timingFunction = "easeOut"
        band:addAnimation(animation, key)
      end
    end
    container:addSublayer(band)
    return container
  end,
}
