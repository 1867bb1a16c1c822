-- A directional wipe: a straight edge, soft if you like, crosses the frame at any angle and
-- the next picture shows behind it, as a transition between two pieces of av.join or
-- av.cutToBeats. (The built-in "wipe" has a hard edge and four directions.)
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "directionalWipe", duration = 0.6 })
--   -- diagonally down to the right, with a 40 px soft edge:
--   av.join(clips, { transitions = { { "directionalWipe", angle = 45, softness = 40 } } })
--
-- The mask is a large rectangle whose leading edge is the wipe's edge, moved in a straight
-- line from just before the frame's first corner to just past its last one along the angle.
return {
  name = "directionalWipe",
  kind = "transition",
  version = "1.0.0",
  description = "A straight, optionally soft edge crosses the frame at any angle, the next picture behind it (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "angle", type = "number", min = -360, max = 360, default = 0, doc = "the way the edge travels, in degrees clockwise from rightwards (90: down)" },
    { name = "direction", type = "string", choices = { "left", "right", "up", "down" }, doc = "the join's direction, in place of angle (right is 0°, down 90°)" },
    { name = "softness", type = "number", min = 0, max = 400, default = 0, doc = "how soft the edge is, in pixels (a blur of the mask)" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1, angle = 30, softness = 40 },
  previewAt = 0.5,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local degrees = p.direction and ({ right = 0, down = 90, left = 180, up = 270 })[p.direction] or p.angle
    local ux, uy = math.cos(math.rad(degrees)), math.sin(math.rad(degrees))
    -- Where the frame's corners lie along the way the edge travels; the blur reaches 2 × softness.
    local first, last = math.huge, -math.huge
    for _, corner in ipairs({ { 0, 0 }, { width, 0 }, { 0, height }, { width, height } }) do
      local along = corner[1] * ux + corner[2] * uy
      first, last = math.min(first, along), math.max(last, along)
    end
    first, last = first - 2 * p.softness, last + 2 * p.softness
    local reach = 2 * (math.sqrt(width * width + height * height) + 2 * p.softness)

    local mask = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true }
    -- Behind the edge: anchored at the middle of its leading side, turned to the angle.
    local behind = av.layer{ backgroundColor = "white" }
    behind.bounds = { 0, 0, reach, 2 * reach }
    behind.anchorPoint = { 1, 0.5 }
    behind.transform = av.transform{ ux, uy, -uy, ux, 0, 0 }
    behind.position = { last * ux, last * uy }
    local move = av.basicAnimation{ keyPath = "position", fromValue = { first * ux, first * uy }, toValue = { last * ux, last * uy },
                                    beginTime = p.start, duration = p.duration, fillMode = "both" }
    move.isRemovedOnCompletion = false
    behind:addAnimation(move, "wipe")
    mask:addSublayer(behind)
    if p.softness > 0 then mask.filters = { av.filter("gaussianBlur", { radius = p.softness }) } end
    return mask
  end,
}
