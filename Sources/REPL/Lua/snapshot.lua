-- :snapshot T [file.png]: the current composition's frame at T, through the current video
-- composition when there is one, written as the export would show it.
local comp, vc, t, path = ...
return av.imageGenerator(comp, vc and { videoComposition = vc } or nil):copyImage(t, path)
