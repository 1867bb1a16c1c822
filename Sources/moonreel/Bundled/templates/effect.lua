-- {{name}}: what it draws, in one line.
--
--   local {{name}} = require "effects.{{name}}"
--   parent:addSublayer({{name}}{ renderSize = {1920, 1080}, text = "Hello" })
--
-- Effects run sandboxed: no files, no io/os; they build layers and animations with av and
-- return them. Parameters are checked before apply runs; apply gets them filled in.
return {
  name = "{{name}}",
  version = "0.1.0",
  description = "A text line in a box, fading in",
  author = "",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "text", type = "string", default = "Hello", doc = "what to write" },
    { name = "color", type = "color", default = "white", doc = "text colour" },
    { name = "fadeIn", type = "number", min = 0, max = 10, default = 0.5, doc = "seconds of fade-in" },
  },
  -- Options that make it draw: `effects install` applies it with these and draws a frame.
  example = { renderSize = { 640, 360 }, text = "Hello" },

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local size = math.floor(height / 12)
    -- Laid out from the top, y down: the container flips its sublayers' geometry.
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local label = av.textLayer{
      string = p.text, fontSize = size, foregroundColor = p.color, alignmentMode = "center",
      frame = { 0, height - 3 * size, width, 1.5 * size }, backgroundColor = { 0, 0, 0, 0.4 },
    }
    label:addAnimation(av.basicAnimation{ keyPath = "opacity", fromValue = 0, toValue = 1,
                                          beginTime = 0, duration = math.max(p.fadeIn, 0.001) }, "fadeIn")
    container:addSublayer(label)
    return container
  end,
}
