-- An iris wipe: the next picture opens out from a point as a circle, a diamond or a
-- rectangle of the frame's shape (or, closing, the last picture shrinks into the point), as a
-- transition between two pieces of av.join or av.cutToBeats.
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "irisWipe", duration = 0.8 })
--   -- closing on the speaker's face, a soft circle:
--   av.join(clips, { transitions = { { "irisWipe", closing = true, center = { 0.62, 0.35 }, softness = 20 } } })
--
-- The shape is a layer (rounded corners make the circle) scaled from nothing to just past the
-- farthest corner, as the mask of the picture that opens (or, closing, the one that shrinks).
return {
  name = "irisWipe",
  kind = "transition",
  version = "1.0.0",
  description = "The next picture opens out from a point as a circle, diamond or rectangle (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "shape", type = "string", default = "circle", choices = { "circle", "diamond", "rectangle" }, doc = "the opening's shape (a rectangle has the frame's proportions)" },
    { name = "center", type = "point", min = 0, max = 1, default = { 0.5, 0.5 }, doc = "{x, y} it opens from, fractions of the frame from its top-left" },
    { name = "closing", type = "boolean", default = false, doc = "true: the last picture shrinks into the point over the next one" },
    { name = "softness", type = "number", min = 0, max = 200, default = 0, doc = "how soft the edge is, in pixels (a blur of the mask)" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1 },
  previewAt = 0.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local cx, cy = p.center.x * width, p.center.y * height
    -- Half-extents that reach the farthest corner (plus the blur, which eats into the edge).
    local dx, dy = math.max(cx, width - cx) + p.softness * 2, math.max(cy, height - cy) + p.softness * 2
    local across, down
    if p.shape == "circle" then
      across = 2 * math.sqrt(dx * dx + dy * dy); down = across
    elseif p.shape == "diamond" then
      -- A square turned 45°: its half-diagonal must reach dx + dy along the axes.
      across = (dx + dy) * math.sqrt(2); down = across
    else
      local grow = math.max(dx / (width / 2), dy / (height / 2))
      across, down = width * grow, height * grow
    end
    local mask = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local opening = av.layer{ backgroundColor = "white", cornerRadius = p.shape == "circle" and across / 2 or 0 }
    opening.bounds = { 0, 0, across, down }
    opening.position = { cx, cy }
    local turn = p.shape == "diamond" and math.rad(45) or 0
    local function sized(scale)
      return av.transform{ scale * math.cos(turn), scale * math.sin(turn), -scale * math.sin(turn), scale * math.cos(turn), 0, 0 }
    end
    -- Scale 0 draws nothing: the picture that opens is not there yet.
    local from, to = sized(0), sized(1)
    if p.closing then from, to = to, from end
    opening.transform = to
    local open = av.basicAnimation{ keyPath = "transform", fromValue = from, toValue = to,
                                    beginTime = p.start, duration = p.duration, fillMode = "both" }
    open.isRemovedOnCompletion = false
    opening:addAnimation(open, "open")
    if p.softness > 0 then mask.filters = { av.filter("gaussianBlur", { radius = p.softness }) } end
    mask:addSublayer(opening)
    if p.closing then return { outgoing = { mask = mask } } end
    return mask
  end,
}
