-- A zoom: the camera seems to rush into the last picture as it fades into the next one,
-- which settles from further out (or, with out = true, the other way), as a transition
-- between two pieces of av.join or av.cutToBeats.
--
--   av.join({ av.asset("a.mov"), av.asset("b.mov") }, { transition = "zoom", duration = 0.5 })
--   av.join(clips, { transitions = { { "zoom", amount = 3, out = true } } })
return {
  name = "zoom",
  kind = "transition",
  version = "1.0.0",
  description = "A rush into the last picture as it fades into the next (a transition)",
  author = "Moonreel",
  license = "MIT",
  -- The join gives renderSize, start and duration (declared for every transition).
  parameters = {
    { name = "amount", type = "number", min = 1.05, max = 10, default = 1.6, doc = "how much the last picture is enlarged by the end (zooming out: shrunk); the next one starts that much smaller (larger)" },
    { name = "out", type = "boolean", default = false, doc = "zoom out instead: the last picture shrinks away and the next one comes down from large" },
    { name = "easing", type = "string", default = "easeIn", choices = { "linear", "easeIn", "easeOut", "easeInEaseOut" }, doc = "how the rush speeds up (easeIn: slow, then fast, as a camera pushing in)" },
  },
  example = { renderSize = { 1280, 720 }, start = 0, duration = 1 },
  previewAt = 0.4,

  apply = function(p)
    -- About the frame's centre; the next picture is under the fading last one.
    local grow = p.out and 1 / p.amount or p.amount
    return {
      outgoing = { scale = { 1, grow }, opacity = { 1, 0 }, timing = p.easing },
      incoming = { scale = { 1 / grow, 1 }, timing = p.easing },
    }
  end,
}
