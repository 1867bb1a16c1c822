-- A logo and a copyright line stamped on a video.
--
--   local watermark = require "effects.watermark"
--   parent:addSublayer(watermark{ renderSize = {1920, 1080}, logo = av.image("logo.png"),
--                                 text = "© 2026 Example" })
return {
  name = "watermark",
  version = "1.2",
  description = "A logo image and a copyright text line in the corners of the video",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "logo", type = "any", doc = "av.image(path) of the logo, or nil for none" },
    { name = "logoCorner", type = "string", default = "topLeft", choices = { "topLeft", "topRight", "bottomLeft", "bottomRight" }, doc = "which corner the logo is in" },
    { name = "logoHeight", type = "number", min = 0.01, max = 1, default = 0.1, doc = "logo height as a fraction of the video height" },
    { name = "logoOpacity", type = "number", min = 0, max = 1, default = 0.9, doc = "0…1" },
    { name = "margin", type = "number", min = 0, max = 0.5, default = 0.03, doc = "distance from the edges, fraction of the height" },
    { name = "text", type = "string", doc = "copyright line, e.g. \"© 2026 Example\"; nil for none" },
    { name = "textHeight", type = "number", min = 0.005, max = 0.5, default = 0.04, doc = "font size as a fraction of the video height" },
    { name = "textColor", type = "color", default = "white", doc = "text colour" },
    { name = "textAlignment", type = "string", default = "right", choices = { "left", "center", "right" }, doc = "where the text is along the bottom edge" },
    { name = "font", type = "string", default = "Noto Sans CJK JP", doc = "font family" },
    { name = "shadow", type = "boolean", default = true, doc = "shadow under the text" },
  },
  example = { renderSize = { 1280, 720 }, text = "© 2026 Example" },

  apply = function(p)
    if type(p.logo) == "string" then
      error(('effect "watermark": logo must be an image: pass av.image("%s")'):format(p.logo), 2)
    end
    local width, height = p.renderSize.width, p.renderSize.height
    local margin = math.floor(height * p.margin)
    -- Laid out from the top, y down (UIKit's way): the container flips its sublayers'
    -- geometry, so it can sit in any Core Animation tree (origin bottom-left, y up).
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }

    -- The text's span along the bottom edge: beside a logo in a bottom corner, not over it.
    local textLeft, textRight = margin, width - margin
    if p.logo then
      local logoHeight = math.floor(height * p.logoHeight)
      local logoWidth = math.floor(logoHeight * p.logo.size.width / p.logo.size.height)
      local room = width - 2 * margin
      if logoWidth > room then
        -- A wide wordmark on a portrait frame ran past the edge, cut off unsaid.
        effect.note(("the logo is %d px wide at logoHeight %g, more than the %d px the frame leaves: it is drawn %d px wide, %d px high")
                      :format(logoWidth, p.logoHeight, room, room, math.floor(room * logoHeight / logoWidth)),
                    "give a smaller logoHeight, or a logo less wide")
        logoHeight, logoWidth = math.floor(room * logoHeight / logoWidth), room
      end
      local right = p.logoCorner == "topRight" or p.logoCorner == "bottomRight"
      local bottom = p.logoCorner == "bottomLeft" or p.logoCorner == "bottomRight"
      local x = right and width - margin - logoWidth or margin
      local y = bottom and height - margin - logoHeight or margin
      container:addSublayer(av.layer{
        contents = p.logo, frame = { x, y, logoWidth, logoHeight },
        opacity = p.logoOpacity, contentsGravity = "resizeAspect",
      })
      if bottom and right then textRight = x - margin elseif bottom then textLeft = x + logoWidth + margin end
    end

    if p.text then
      local size = math.max(8, math.floor(height * p.textHeight))
      container:addSublayer(av.textLayer{
        string = p.text, font = p.font, fontSize = size, foregroundColor = p.textColor,
        alignmentMode = p.textAlignment, frame = { textLeft, height - margin - size * 1.4, math.max(1, textRight - textLeft), size * 1.6 },
        shadowOpacity = p.shadow and 0.7 or 0, shadowRadius = math.max(1, size / 10), shadowOffset = { 0, math.max(1, size / 20) },
      })
    end
    return container
  end,
}
