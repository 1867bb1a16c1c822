-- The picture in docs/porting-from-ios.md (docs/images/geometry-flipped.png): where a layer at
-- frame {20, 20} lands in the root, in a flipped layer, and in a flipped layer inside a flipped one.
--   moonreel run scripts/examples/geometry_flipped.lua CLIP OUT.mp4
local asset = av.asset(arg[1])
local comp = av.composition(); comp:insertTimeRange(av.range(0, 1), asset, 0)
local vc = av.videoComposition(comp)
local w, h = 640, 360 -- CLIP is drawn at this size: use a 640×360 one
local root, video = av.layer{ frame = {0, 0, w, h} }, av.layer{ frame = {0, 0, w, h} }
root:addSublayer(video)
local function box(x, color, label)
  local b = av.layer{ frame = {x, 20, 190, 70}, backgroundColor = color, cornerRadius = 8 }
  b:addSublayer(av.textLayer{ string = label, fontSize = 15, frame = {0, 8, 190, 56}, alignmentMode = "center", foregroundColor = "white", isWrapped = true })
  return b
end
-- The root: Core Animation's space, origin bottom-left, y up.
root:addSublayer(box(20, "systemBlue", "root: frame {20, 20}\ny up, from the bottom"))
-- A flipped layer: its sublayers from its top-left, y down.
local flipped = av.layer{ frame = {0, 0, w, h}, isGeometryFlipped = true }
flipped:addSublayer(box(225, "systemRed", "inside a flipped layer:\n{20…} from the top"))
-- A flipped layer inside a flipped one: relative to its parent, so y up again.
local again = av.layer{ frame = {0, 0, w, h}, isGeometryFlipped = true }
again:addSublayer(box(430, "systemGreen", "flipped inside flipped:\ny up again"))
flipped:addSublayer(again)
root:addSublayer(flipped)
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = root }
local s = av.exportSession(comp, "HighestQuality"); s.outputURL = arg[2]; s.videoComposition = vc; s.overwrite = true
assert(s:export())
