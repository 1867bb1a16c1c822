-- A radial wipe: a hand sweeps a quarter turn about a corner of the frame and the next
-- picture shows behind it, as a transition between two pieces of av.join or av.cutToBeats.
-- It is the clock wipe turning about a corner.
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "radialWipe", duration = 0.8 })
--   av.join(clips, { transitions = { { "radialWipe", corner = "bottomRight", softness = 16 } } })
local clockWipe = require "effects.clockWipe"

-- Each corner, and where the hand starts for a clockwise quarter turn across the frame.
local corners = {
  topLeft = { 0, 0, 90 }, topRight = { 1, 0, 180 }, bottomRight = { 1, 1, 270 }, bottomLeft = { 0, 1, 0 },
}

return {
  name = "radialWipe",
  kind = "transition",
  version = "1.0.0",
  description = "A hand sweeps a quarter turn about a corner, the next picture behind it (a transition)",
  author = "Moonreel",
  license = "MIT",
  requires = { effects = { clockWipe = "^1.0" } },
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "corner", type = "string", default = "topLeft", choices = { "topLeft", "topRight", "bottomRight", "bottomLeft" }, doc = "the corner the hand turns about" },
    { name = "clockwise", type = "boolean", default = true, doc = "the hand's way round" },
    { name = "softness", type = "number", min = 0, max = 200, default = 0, doc = "how soft the hand's edge is, in pixels" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1 },
  previewAt = 0.5,

  apply = function(p)
    local x, y, angle = table.unpack(corners[p.corner])
    -- Counter-clockwise, the hand starts along the other edge at the corner.
    if not p.clockwise then angle = angle + 90 end
    -- A quarter turn in the time: the whole turn takes four times as long, from the same start.
    local whole = clockWipe{ renderSize = p.renderSize, start = p.start, duration = 4 * p.duration, clockwise = p.clockwise,
                             startAngle = angle % 360, center = { x, y }, softness = p.softness }
    return whole
  end,
}
