-- The Ken Burns effect: a photo that slowly zooms and pans from one framing to another,
-- over its place in a join (or anywhere over the video).
--
--   local comp, vc, mix, parts = av.join({ av.asset("a.mov"), { av.asset("photo.jpg"), duration = 5 } })
--   local kenBurns = require "effects.kenBurns"
--   parent:addSublayer(kenBurns{ renderSize = {1920, 1080}, image = av.image("photo.jpg"),
--                                start = parts[2].timeRange.start, duration = 5,
--                                from = { zoom = 1, x = 0.5, y = 0.5 }, to = { zoom = 1.3, x = 0.65, y = 0.4 } })
--
-- A framing is the point of the photo (x, y: fractions from its top-left) shown at the centre
-- of the frame and how far it is zoomed in (1: the photo just covers the frame). A point near
-- an edge at a low zoom shows past the photo's edge: the effect frames what it is asked to
-- and warns (effectAdjusted) that backgroundColor shows there.
return {
  name = "kenBurns",
  version = "1.0.0",
  description = "A photo zooming and panning slowly from one framing to another",
  author = "Moonreel",
  license = "MIT",
  parameters = {
    { name = "renderSize", type = "size", min = 16, max = 16384, required = true, doc = "{width, height} of the video composition" },
    { name = "image", type = "image", required = true, doc = "av.image(path) of the photo" },
    { name = "start", type = "number", min = 0, max = 36000, default = 0, doc = "seconds into the video it appears" },
    { name = "duration", type = "number", min = 0.04, max = 36000, default = 5, doc = "seconds it is shown and moves" },
    { name = "from", type = "table", default = { zoom = 1, x = 0.5, y = 0.5 }, doc = "the first framing: {zoom=, x=, y=} (zoom ≥ 0.1; x, y in 0…1 of the photo)" },
    { name = "to", type = "table", default = { zoom = 1.25, x = 0.5, y = 0.5 }, doc = "the last framing, as from" },
    { name = "easing", type = "string", default = "linear", choices = { "linear", "easeIn", "easeOut", "easeInEaseOut" }, doc = "how the move speeds up and slows down" },
    { name = "backgroundColor", type = "color", default = "black", doc = "what shows past the photo's edges" },
  },
  example = { renderSize = { 1280, 720 }, duration = 4, from = { zoom = 1, x = 0.5, y = 0.5 }, to = { zoom = 1.6, x = 0.65, y = 0.35 } },
  previewAt = 3,

  apply = function(p)
    local width, height = p.renderSize.width, p.renderSize.height
    local function framing(value, name)
      if type(value.zoom) ~= "number" or value.zoom < 0.1 or value.zoom > 100 then
        error(('effect "kenBurns": %s.zoom must be a number in 0.1…100, got %s'):format(name, tostring(value.zoom)), 0)
      end
      for _, axis in ipairs({ "x", "y" }) do
        if type(value[axis]) ~= "number" or value[axis] < 0 or value[axis] > 1 then
          error(('effect "kenBurns": %s.%s must be a number in 0…1, got %s'):format(name, axis, tostring(value[axis])), 0)
        end
      end
      return value
    end
    local from, to = framing(p.from, "from"), framing(p.to, "to")
    -- At zoom 1 the photo just covers the frame (aspect fill), centred.
    local cover = math.max(width / p.image.size.width, height / p.image.size.height)
    local photoWidth, photoHeight = p.image.size.width * cover, p.image.size.height * cover
    -- The frame's half-width and half-height in fractions of the photo, at each framing.
    for _, named in ipairs({ { "from", from }, { "to", to } }) do
      local name, f = named[1], named[2]
      local across, down = width / photoWidth / (2 * f.zoom), height / photoHeight / (2 * f.zoom)
      local past = (f.x - across < -1e-9 and "left") or (f.x + across > 1 + 1e-9 and "right")
                   or (f.y - down < -1e-9 and "top") or (f.y + down > 1 + 1e-9 and "bottom")
      if past then
        effect.warn(("the %s framing (zoom %g at %g, %g) shows past the photo's %s edge, where backgroundColor fills the frame"):format(name, f.zoom, f.x, f.y, past),
                    ("zoom in further or move x, y towards the middle: at zoom %g, x stays within %.3f…%.3f and y within %.3f…%.3f")
                      :format(f.zoom, math.min(across, 0.5), math.max(1 - across, 0.5), math.min(down, 0.5), math.max(1 - down, 0.5)))
      end
    end
    local container = av.layer{ frame = { 0, 0, width, height }, isGeometryFlipped = true, masksToBounds = true,
                                backgroundColor = p.backgroundColor, opacity = 0 }
    local photo = av.layer{ contents = p.image, contentsGravity = "resize",
                            frame = { (width - photoWidth) / 2, (height - photoHeight) / 2, photoWidth, photoHeight } }
    -- Scaled about the photo's centre, then moved so the framing's point is at the frame's
    -- centre: the crop moves in a straight line from one framing to the other.
    local function transform(f)
      return av.transform{ f.zoom, 0, 0, f.zoom, -f.zoom * (f.x - 0.5) * photoWidth, -f.zoom * (f.y - 0.5) * photoHeight }
    end
    local move = av.basicAnimation{ keyPath = "transform", fromValue = transform(from), toValue = transform(to),
                                    beginTime = p.start, duration = p.duration, timingFunction = p.easing, fillMode = "both" }
    move.isRemovedOnCompletion = false
    photo:addAnimation(move, "move")
    container:addSublayer(photo)
    -- Shown during its time only.
    container:addAnimation(av.keyframeAnimation{ keyPath = "opacity", values = { 1, 1 }, keyTimes = { 0, 1 },
                                                 beginTime = p.start, duration = p.duration }, "shown")
    return container
  end,
}
