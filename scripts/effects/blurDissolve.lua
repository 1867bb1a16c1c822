-- A blur dissolve: the last picture blurs as it fades and the next one comes into focus, as a
-- transition between two pieces of av.join or av.cutToBeats.
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "blurDissolve", duration = 0.8 })
--   av.join(clips, { transitions = { { "blurDissolve", radius = 40 } } })
return {
  name = "blurDissolve",
  kind = "transition",
  version = "1.0.0",
  description = "The last picture blurs as it fades, the next one comes into focus (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "radius", type = "number", min = 0, max = 200, default = 24, doc = "the blur at its strongest, in pixels of a 1080-line frame (scaled to the frame's height)" },
    { name = "easing", type = "string", default = "linear", choices = { "linear", "easeIn", "easeOut", "easeInEaseOut" }, doc = "how the fade and the blur speed up and slow down" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1 },
  previewAt = 0.5,

  apply = function(p)
    local height = p.renderSize.height
    local strongest = math.min(200, p.radius * height / 1080)
    return {
      outgoing = { blur = { 0, strongest }, opacity = { 1, 0 }, timing = p.easing },
      incoming = { blur = { strongest, 0 }, timing = p.easing },
    }
  end,
}
