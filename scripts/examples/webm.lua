-- Export for the web: VP9 video and Opus audio in WebM at a chosen bit rate, with a
-- keyframe exactly every 2 seconds (where streaming players can cut and seek).
-- The writer settings override the preset's (HighestQuality: size, speed, audio rate).
--
-- usage: moonreel run webm.lua IN.mov OUT.webm [KBPS]      (video bit rate, default 1000)
local input, output = arg[1], arg[2]
if not (input and output) then
  error("usage: moonreel run webm.lua IN.mov OUT.webm [KBPS]", 0)
end
local kbps = tonumber(arg[3] or "1000")

local session = av.exportSession(av.asset(input), "HighestQuality")
session.outputURL = output
session.videoSettings = { codec = "vp9", bitRate = kbps * 1000, keyframeInterval = 2 }
session.audioSettings = { codec = "opus", bitRate = 96000 }
print(("%s: about %.2f MB"):format(output, session.estimatedOutputFileLength / 1e6))
local ok, err = session:export()
if not ok then error(err, 0) end
print(("wrote %s: %.3f s"):format(output, session.outputDuration))
