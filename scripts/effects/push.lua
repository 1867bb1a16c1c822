-- A push: the next picture slides in and pushes the last one out, the last one moving more
-- slowly for depth if you like (parallax) and darkening as it goes, as a transition between
-- two pieces of av.join or av.cutToBeats. (The built-in "slide" is a push without either.)
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "push", duration = 0.5 })
--   -- in from the bottom, the last picture moving a third as fast and dimming by half:
--   av.join(clips, { transitions = { { "push", direction = "up", parallax = 0.67, dim = 0.5 } } })
return {
  name = "push",
  kind = "transition",
  version = "1.0.0",
  description = "The next picture slides in and pushes the last one out, with parallax and dimming (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "direction", type = "string", default = "left", choices = { "left", "right", "up", "down" }, doc = "the way both pictures move (left: the next one comes in from the right)" },
    { name = "parallax", type = "number", min = 0, max = 1, default = 0, doc = "how much less the last picture moves: 0 as far as the next one, 1 not at all (the next slides over it)" },
    { name = "dim", type = "number", min = 0, max = 1, default = 0, doc = "how dark the last picture gets by the end (0: not at all, 1: black)" },
    { name = "easing", type = "string", default = "easeInEaseOut", choices = { "linear", "easeIn", "easeOut", "easeInEaseOut" }, doc = "how the move speeds up and slows down" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1, parallax = 0.5, dim = 0.4 },
  previewAt = 0.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local steps = { left = { -width, 0 }, right = { width, 0 }, up = { 0, -height }, down = { 0, height } }
    -- Offsets are in the frame's pixels, y down.
    local dx, dy = table.unpack(steps[p.direction])
    local kept = 1 - p.parallax
    return {
      outgoing = { offset = { { 0, 0 }, { dx * kept, dy * kept } }, opacity = { 1, 1 - p.dim }, timing = p.easing },
      incoming = { offset = { { -dx, -dy }, { 0, 0 } }, onTop = true, timing = p.easing },
    }
  end,
}
