-- A clock wipe: a hand sweeps round a point and the next picture shows behind it, as a
-- transition between two pieces of av.join or av.cutToBeats.
--
--   local comp, vc, mix = av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "clockWipe", duration = 1 })
--   -- counter-clockwise from 3 o'clock, about the lower third, with a soft hand:
--   av.join(clips, { transitions = { { "clockWipe", clockwise = false, startAngle = 90, center = { 0.5, 0.7 }, softness = 12 } } })
--
-- The join calls it with its renderSize, start and duration; it returns the mask the incoming
-- picture is drawn through. The mask is two half-frames, each holding a half-plane that turns
-- about the centre: the right one sweeps the first half turn, the left one the second, so the
-- swept part is exactly the sector behind the hand (masks are layers, there is no arc).
return {
  name = "clockWipe",
  kind = "transition",
  version = "1.0.0",
  description = "A hand sweeps round a point and the next picture shows behind it (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "clockwise", type = "boolean", default = true, doc = "the hand's way round" },
    { name = "startAngle", type = "number", min = -360, max = 360, default = 0, doc = "where the hand starts, in degrees clockwise from 12 o'clock" },
    { name = "center", type = "point", min = 0, max = 1, default = { 0.5, 0.5 }, doc = "{x, y} the hand turns about, fractions of the frame from its top-left" },
    { name = "softness", type = "number", min = 0, max = 200, default = 0, doc = "how soft the hand's edge is, in pixels (a blur of the mask)" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1 },
  previewAt = 0.4,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local cx, cy = p.center.x, p.center.y
    -- Counter-clockwise is the clockwise wipe mirrored left to right.
    local mirrored = not p.clockwise
    if mirrored then cx = 1 - cx end
    cx, cy = cx * width, cy * height
    local reach = math.sqrt(width * width + height * height)   -- past every corner from any centre
    local turn = math.rad(mirrored and -p.startAngle or p.startAngle)

    -- Laid out from the top-left, y down: positive turns are clockwise on the picture.
    local mask = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    local pivot = av.layer{ frame = { 0, 0, width, height } }
    mask:addSublayer(pivot)
    if turn ~= 0 then
      pivot.anchorPoint = { cx / width, cy / height }
      pivot.position = { cx, cy }
      pivot.transform = av.transform{ math.cos(turn), math.sin(turn), -math.sin(turn), math.cos(turn), 0, 0 }
    end
    if mirrored then mask.transform = av.transform{ -1, 0, 0, 1, 0, 0 } end
    if p.softness > 0 then mask.filters = { av.filter("gaussianBlur", { radius = p.softness }) } end

    -- Each half of the plane at the centre holds a half-plane that turns half a turn about it.
    local function half(side, sweep)
      local holder = av.layer{ frame = side == "right" and { cx, cy - reach, reach, 2 * reach } or { cx - reach, cy - reach, reach, 2 * reach },
                               masksToBounds = true }
      -- The right half's blade starts as the left half-plane (nothing of the right half), the
      -- left one's as the right half-plane (nothing of the left half).
      local blade = av.layer{ backgroundColor = "white" }
      blade.bounds = { 0, 0, 2 * reach, 2 * reach }
      blade.anchorPoint = side == "right" and { 1, 0.5 } or { 0, 0.5 }
      blade.position = side == "right" and { 0, reach } or { reach, reach }
      local hand = av.keyframeAnimation{ keyPath = "transform.rotation", values = sweep, keyTimes = { 0, 0.5, 1 },
                                         beginTime = p.start, duration = p.duration, fillMode = "both" }
      hand.isRemovedOnCompletion = false
      blade:addAnimation(hand, "sweep")
      holder:addSublayer(blade)
      pivot:addSublayer(holder)
    end
    half("right", { 0, math.pi, math.pi })
    half("left", { 0, 0, math.pi })
    return mask
  end,
}
