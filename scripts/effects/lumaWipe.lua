-- A luma wipe: the next picture shows through a grey picture, its darkest parts first and
-- its lightest last (Kdenlive's and MLT's luma files work: binary PGM, PNG, JPEG), as a
-- transition between two pieces of av.join or av.cutToBeats.
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") },
--           { transitions = { { "lumaWipe", image = av.image("/usr/share/kdenlive/lumas/HD/cloud.pgm"), softness = 0.2 } } })
--   -- lightest parts first:
--   av.join(clips, { transition = { "lumaWipe", image = av.image("spiral.png"), invert = true }, duration = 1.5 })
--
-- The mask is the picture stretched over the frame through a lumaThreshold filter whose
-- threshold rises from below black to above white: pixels darker than it show the next
-- picture, across a band `softness` wide.
return {
  name = "lumaWipe",
  kind = "transition",
  version = "1.0.0",
  description = "The next picture shows through a grey picture, darkest parts first (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "image", type = "image", required = true, doc = "the grey picture (av.image(path)), stretched over the frame; its colour is read as luma" },
    { name = "softness", type = "number", min = 0, max = 1, default = 0.1, doc = "how soft the edge is, as a fraction of black to white (0: hard)" },
    { name = "invert", type = "boolean", default = false, doc = "lightest parts first" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1, softness = 0.2 },
  previewAt = 0.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local mask = av.layer{ frame = { 0, 0, width, height }, contents = p.image, contentsGravity = "resize" }
    -- The threshold passes the whole band: at the start no pixel is under it, at the end every one.
    local from, to = -p.softness / 2 - 0.001, 1 + p.softness / 2 + 0.001
    mask.filters = { av.filter("lumaThreshold", { name = "wipe", threshold = to, softness = p.softness, invert = p.invert and 1 or 0 }) }
    local rise = av.basicAnimation{ keyPath = "filters.wipe.threshold", fromValue = from, toValue = to,
                                    beginTime = p.start, duration = p.duration, fillMode = "both" }
    rise.isRemovedOnCompletion = false
    mask:addAnimation(rise, "wipe")
    return mask
  end,
}
