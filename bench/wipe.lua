-- bench/run.sh's wipe job: two pieces of a clip joined by a transition (a built-in kind or a
-- transition effect's name), exported as HighestQuality.
-- usage: moonreel run bench/wipe.lua OUT.mp4 CLIP SECONDS_OF_EACH TRANSITION
local output, clip, seconds, transition = arg[1], arg[2], tonumber(arg[3]), arg[4]
local comp, vc, mix = av.join({ { av.asset(clip), duration = seconds }, { av.asset(clip), start = 1, duration = seconds } },
                              { transition = transition, duration = 1 })
local session = av.exportSession(comp, "HighestQuality")
session.videoComposition, session.audioMix, session.outputURL = vc, mix, output
assert(session:export())
