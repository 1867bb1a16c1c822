-- The chunked-render tests' and bench/chunks.py's template: a clip under one line of text,
-- exported with HighestQuality (crf and keyframe spacing settable), for `run --chunks`.
local p = av.parameters{
  { name = "clip", type = "string", required = true },
  { name = "output", type = "string", required = true },
  { name = "crf", type = "number", default = 23 },
  { name = "qp", type = "number", default = -1, doc = "a constant quantizer instead of crf (-1: none)" },
  { name = "keyframes", type = "number", default = 0 },
  { name = "deterministic", type = "boolean", default = false, doc = "x264's lookahead in step with the encode" },
}
local asset = av.asset(p.clip)
local comp = av.composition()
comp:insertTimeRange(av.range(0, asset.durationTime), asset, 0)
local vc = av.videoComposition(comp)
local w, h = vc.renderSize[1], vc.renderSize[2]
local parent, video = av.layer{ frame = {0, 0, w, h} }, av.layer{ frame = {0, 0, w, h} }
parent:addSublayer(video)
parent:addSublayer(av.textLayer{ string = "In pieces", fontSize = 40, frame = {0, 10, w, 60},
                                  alignmentMode = "center", foregroundColor = {1, 1, 0, 1} })
vc.animationTool = av.animationTool{ videoLayer = video, parentLayer = parent }
local session = av.exportSession(comp, "HighestQuality")
session.outputURL = p.output
session.videoComposition = vc
session.videoSettings = { crf = p.qp < 0 and p.crf or nil, qp = p.qp >= 0 and p.qp or nil,
                          keyframeInterval = p.keyframes > 0 and p.keyframes or nil, deterministic = p.deterministic or nil }
local ok, err = session:export()
if not ok then error(err, 0) end
print("exported " .. p.output)
