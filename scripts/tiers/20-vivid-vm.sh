#!/usr/bin/env bash
# Tier: GraniteCapture against the kernel's real vivid V4L2 driver, under qemu (see scripts/vivid-vm).
# Checks (granite-v4l2-check): describe, negotiation read-back with an adjusted size, unsupported
# format, missing and busy devices, 60+ YUYV frames at the rate set, NV12 and RGB24 streams, and a
# USB-style disconnect mid-stream (vivid's Disconnect control) recovered by reopening after a reload;
# then granite-cam itself captures 30 YUYV frames from vivid to disk, setting two controls with
# --ctrl (read back: its status line shows "ctrl brightness=200 boolean=0 menu=3 (…)"; an unknown control and an out-of-range value are refused, naming
# what is valid); a stream whose buffers vivid all drops (its Percentage of Dropped Buffers control at
# 100: streaming, and never a frame) ends after --first-frame-timeout with exit 1, naming the device
# and what was negotiated. A second vivid instance (HDMI in, HDMI out: /dev/video1 capture, /dev/video2
# output) checks --v4l2-out: granite-cam writes the test pattern to the output, vivid's Loop Video
# feeds it back to the capture node, and granite-v4l2-check reads the drawn frame counters there,
# in order; then the background filter into it (--cpu-filters --segment-device cpu: the person mask made
# in the guest by GraniteML on the CPU, once, from the packed landscape selfie model): a frame read back
# from the loop (granite-cam, PNG) comes here and python3 checks it is the replaced background, 0x00B140
# within a few levels (the test pattern has no person). Sound from a real ALSA driver: snd-aloop's card, fed noise by aplay (alsa-utils) on
# hw:Loopback,0,0; granite-cam records the test pattern at 160x120, 10 fps with --audio
# alsa:hw:Loopback,1,0: a 3 s recording whose sound ends with its last frame; then a second one,
# during which another granite-cam on the same PCM exits 1 before capture ("hw:Loopback,1,0: ALSA:
# busy …"), the recorder stopped (SIGSTOP) for 1.5 s reports an overrun and fills the gap with
# silence, and the card unbound (snd_aloop.0) ends the run at once with exit 1, naming the PCM,
# the file closed under its final name. Both files come back (vivid-vm --fetch) and are read with ffprobe/ffmpeg here: h264 + opus,
# video packets = the frames granite-cam reports, the sound as long as it reports, the overrun's
# gap one stretch of 1-2.5 s of silence with sound after it. The guest carries FFmpeg's libraries
# (granite-cam opens them when a recording starts) and /usr/share/alsa (libasound's configuration).
# About 70-85 s of qemu in all (the loop at 640x480, the size of vivid's default timings; the background
# check ~25 s of it: Marble's CPU reference and the model in the debug build under TCG).
# With CI=true it fails when it cannot run; elsewhere it prints why it skipped.
. "$(dirname "$0")/../lib.sh"
cd "$ROOT"
cannot_run() {
  if [ "${CI:-}" = "true" ]; then echo "vivid-vm tier: FAIL: $1" >&2; exit 1; fi
  echo "vivid-vm tier: SKIPPED: $1"; exit 77
}
ensure_apt "${GRANITE_APT_VM_PACKAGES[@]}" || cannot_run "could not install ${GRANITE_APT_VM_PACKAGES[*]}"
command -v qemu-system-x86_64 >/dev/null || cannot_run "qemu-system-x86_64 is missing"
command -v ffprobe >/dev/null || cannot_run "ffprobe is missing (ffmpeg: the recordings are read back with it)"
for product in granite-v4l2-check granite-cam; do
  swift build --product "$product" >/dev/null || { echo "vivid-vm tier: FAIL: build of $product failed" >&2; exit 1; }
done
BIN="$(swift build --show-bin-path)"
GUEST='granite-v4l2-check /dev/video0 --fps 30 --frames 60 --replug /bin/vivid-reload || exit 1
granite-cam --device /dev/video0 --format yuyv --size 320x180 --fps 30 --frames 30 --out /tmp/cam --image-format ppm --status-hz 1 \
  --ctrl brightness=200 --ctrl boolean=false --ctrl menu=3 2>/tmp/camlog || exit 2
grep -m1 -o "ctrl .*" /tmp/camlog
grep -q "ctrl brightness=200 boolean=0 menu=3" /tmp/camlog || exit 4
n=$(ls /tmp/cam | grep -c "^frame_.*[.]ppm$"); lines=$(wc -l < /tmp/cam/frames.jsonl)
echo "granite-cam on vivid: $n frames written, $lines sidecar lines"
[ "$n" -eq 30 ] && [ "$lines" -eq 30 ] || exit 3
granite-v4l2-check /dev/video0 --controls > /tmp/controls || exit 4
grep -E "^(brightness|boolean|menu) " /tmp/controls
grep -q "^brightness .*value=200 " /tmp/controls && grep -q "^boolean .*value=0" /tmp/controls && grep -q "^menu .*value=3 " /tmp/controls || exit 4
granite-cam --device /dev/video0 --ctrl no_such_control=1 --frames 1 2> /tmp/err; echo "unknown control: status $?"; cat /tmp/err
grep -q "no control named no_such_control; the device has: brightness, contrast" /tmp/err || exit 4
granite-cam --device /dev/video0 --ctrl brightness=999 --frames 1 2> /tmp/err; echo "out of range: status $?"; cat /tmp/err
grep -q "control brightness cannot be set to 999: out of range (valid: 0...255)" /tmp/err || exit 4
t0=$(date +%s); granite-cam --device /dev/video0 --format yuyv --size 320x180 --frames 5 --out /tmp/none \
  --ctrl percentage_of_dropped_buffers=100 --first-frame-timeout 2 2> /tmp/err; code=$?; took=$(( $(date +%s) - t0 ))
echo "a stream that sends nothing: status $code after $took s (start-up included)"; tail -1 /tmp/err
[ $code -eq 1 ] && [ $took -le 60 ] && grep -q "^granite-cam: error: /dev/video0: no first frame within 2 s (streaming yuyv 320x180" /tmp/err || exit 7
granite-v4l2-check /dev/video0 --set percentage_of_dropped_buffers=0 || exit 7
granite-cam --source testpattern --frames 1 --v4l2-out /dev/video0 2> /tmp/err; cat /tmp/err
grep -q "not a video output device" /tmp/err || exit 6
granite-v4l2-check /dev/video1 --set loop_video=1 --set osd_text_mode=2 || exit 5
granite-cam --source testpattern --size 640x480 --fps 10 --duration 45 --v4l2-out /dev/video2 --status-hz 0.2 2> /tmp/out.log &
writer=$!
granite-v4l2-check /dev/video1 --loop-read 640x480 --frames 5 --seconds 40 --fps 10; loop=$?
kill -INT $writer; wait $writer; grep "granite-cam:" /tmp/out.log
[ $loop -eq 0 ] || exit 5
# background into the output: the person mask made here on the CPU (GraniteML; once: ~10 s under TCG) and Marble'"'"'s CPU
# reference replacing the rest with 0x00B140 (~5 s a frame); once a frame has had a mask (" age " on the status line),
# 2 looped frames are read back and the last goes to the host.
granite-cam --source testpattern --size 640x480 --fps 1 --duration 120 --filter background:mode=color,color=0x00B140 --cpu-filters \
  --segment-device cpu --segment-every 1000 --segment-model "$MODEL" --v4l2-out /dev/video2 --status-hz 1 > /tmp/bg.log 2>&1 &
writer=$!; t0=$(date +%s)
while ! grep -q " age " /tmp/bg.log && [ $(( $(date +%s) - t0 )) -lt 90 ] && kill -0 $writer 2> /dev/null; do sleep 0.5; done
echo "background: a frame with the person mask after $(( $(date +%s) - t0 )) s: $(grep -m1 " age " /tmp/bg.log)"
grep -q " age " /tmp/bg.log || { kill -INT $writer; cat /tmp/bg.log; exit 12; }
granite-cam --device /dev/video1 --size 640x480 --frames 2 --out /tmp/loop --image-format png --status-hz 0 2> /tmp/loop.log; loop=$?
kill -INT $writer; wait $writer; code=$?; grep "granite-cam:" /tmp/bg.log; last=$(ls /tmp/loop/frame_*.png | tail -1)
echo "background: writer status $code, reader status $loop, the last looped frame $last"
[ $loop -eq 0 ] && [ $code -eq 0 ] && [ -s "$last" ] && grep -q "^granite-cam: 1 person masks" /tmp/bg.log || { cat /tmp/loop.log; exit 12; }
cp "$last" /out/background.png
# Sound from a real ALSA driver: aplay plays noise into snd-aloop'"'"'s hw:Loopback,0,0, granite-cam records it from hw:Loopback,1,0.
aplay -q -D hw:Loopback,0,0 -t raw -f S16_LE -r 48000 -c 2 /dev/urandom 2> /tmp/aplay.log &
PCM=hw:Loopback,1,0
# field PATTERN FILE: what PATTERN'"'"'s group matches in the first line of granite-cam'"'"'s that it matches whole.
field() { sed -n "s|^granite-cam: $1\$|\\1|p" "$2" | head -1; }
granite-cam --source testpattern --size 160x120 --fps 10 --duration 3 --record /tmp/a.mkv --audio alsa:$PCM --status-hz 0 > /tmp/a.log 2>&1; code=$?
grep -E "sound|recorded|error" /tmp/a.log; echo "a normal recording: status $code, $(wc -c < /tmp/a.mkv) bytes"
frames=$(field "recorded \\([0-9]*\\) frames.*" /tmp/a.log); video=$(field "recorded .* frames, \\([0-9.]*\\) s to /tmp/a.mkv" /tmp/a.log)
sound=$(field "sound: \\([0-9.]*\\) s of libopus, 48000 Hz, 2 channels" /tmp/a.log)
[ $code -eq 0 ] && [ "$frames" -ge 20 ] && [ -s /tmp/a.mkv ] && [ ! -e /tmp/a.partial.mkv ] || exit 8
awk -v v="$video" -v s="$sound" "BEGIN { exit !(s != \"\" && s - v >= 0.05 && s - v <= 0.15) }" || exit 8
granite-cam --source testpattern --size 160x120 --fps 10 --duration 30 --record /tmp/b.mkv --audio alsa:$PCM --status-hz 0 > /tmp/b.log 2>&1 &
recorder=$!; t0=$(date +%s)
i=0; while ! grep -q "^granite-cam: sound from" /tmp/b.log && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
granite-cam --source testpattern --frames 1 --record /tmp/busy.mkv --audio alsa:$PCM > /tmp/busy.log 2>&1; code=$?
echo "a second recorder on the same PCM: status $code"; grep error /tmp/busy.log
[ $code -eq 1 ] && grep -q "^granite-cam: error: --audio: $PCM: ALSA: busy: another program is capturing from it" /tmp/busy.log || exit 9
ls /tmp/busy*.mkv 2> /dev/null && exit 9
kill -STOP $recorder; sleep 1.5; kill -CONT $recorder; sleep 1.5
echo snd_aloop.0 > /sys/bus/platform/drivers/snd_aloop/unbind
wait $recorder; code=$?; took=$(( $(date +%s) - t0 ))
echo "stopped 1.5 s, then the card unbound: status $code after $took s"; grep -E "frames|overrun|sound:|error" /tmp/b.log
[ $code -eq 1 ] && [ $took -lt 25 ] && [ -s /tmp/b.mkv ] && [ ! -e /tmp/b.partial.mkv ] || exit 10
grep -q "^granite-cam: error: --audio: alsa:$PCM: device disconnected (snd_pcm_[a-z]*: No such device, after [0-9.]* s of sound); the recording ends here" /tmp/b.log || exit 10
grep -q "^granite-cam: alsa:$PCM: [1-9][0-9]* overruns* (" /tmp/b.log || exit 11
frames=$(field "\\([0-9]*\\) frames in .*" /tmp/b.log)
grep -q "^granite-cam: recorded $frames frames, " /tmp/b.log || exit 11
video=$(field "recorded .* frames, \\([0-9.]*\\) s to /tmp/b.mkv" /tmp/b.log)
sound=$(field "sound: \\([0-9.]*\\) s of libopus, 48000 Hz, 2 channels, [0-9.]* s of gaps in the capture filled with silence" /tmp/b.log)
awk -v v="$video" -v s="$sound" "BEGIN { exit !(s != \"\" && s - v >= -0.5 && s - v <= 0.15) }" || exit 11
cp /tmp/a.mkv /tmp/a.log /tmp/b.mkv /tmp/b.log /out/'
# recording NAME GAPS: the guest's NAME.mkv read back here: its codecs, as many video packets as the
# summary's frames, the sound (to its last packet's end) as long as the summary says, and GAPS stretches of silence (of 1 to
# 2.5 s, with sound after) where the input was noise throughout.
recording() {
  local file="$FETCHED/$1.mkv" log="$FETCHED/$1.log" frames sound codecs packets duration silence
  [ -s "$file" ] && [ -s "$log" ] || { echo "vivid-vm tier: FAIL: $1.mkv did not come back from the guest" >&2; return 1; }
  frames=$(sed -n 's/^granite-cam: recorded \([0-9]*\) frames, .*/\1/p' "$log")
  sound=$(sed -n 's/^granite-cam: sound: \([0-9.]*\) s of .*/\1/p' "$log")
  codecs=$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$file" | tr '\n' ' ')
  packets=$(ffprobe -v error -select_streams v -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$file")
  duration=$(ffprobe -v error -select_streams a -show_entries packet=pts_time,duration_time -of csv=p=0 "$file" | awk -F, '$2 != "" { end = $1 + $2 } END { print end }')
  silence=$(ffmpeg -hide_banner -nostats -i "$file" -map 0:a -af silencedetect=noise=-40dB:d=0.3 -f null - 2>&1 \
    | grep -o "silence_[a-z]*: [0-9.-]*" | cut -d' ' -f2 | tr '\n' ' ')
  echo "ffprobe $1.mkv: ${codecs}, $packets video packets (granite-cam: $frames frames), sound to ${duration} s (granite-cam: ${sound} s), silence (start end length): ${silence:-none}"
  [ "$codecs" = "h264 opus " ] && [ "$packets" = "$frames" ] || return 1
  awk -v d="$duration" -v s="$sound" -v gaps="$2" -v silence="$silence" 'BEGIN {
    n = split(silence, t, " ")
    if (s == "" || d - s > 0.05 || s - d > 0.05 || n != 3 * gaps) exit 1
    if (gaps == 1 && (t[3] < 1 || t[3] > 2.5 || t[2] > d - 0.5)) exit 1
  }'
}
# background_frame: the looped frame read back here (ffmpeg decodes the PNG): the test pattern has no person, so
# nearly all of it must be the replaced background, 0x00B140 within a few levels (two trips through YUV).
background_frame() {
  local file="$FETCHED/background.png"
  [ -s "$file" ] || { echo "vivid-vm tier: FAIL: background.png did not come back from the guest" >&2; return 1; }
  ffmpeg -v error -i "$file" -f rawvideo -pix_fmt rgb24 - | python3 -c '
import sys
px = sys.stdin.buffer.read()
n = len(px) // 3
r, g, b = px[0::3], px[1::3], px[2::3]
near = sum(1 for i in range(n) if abs(r[i] - 0x00) <= 6 and abs(g[i] - 0xB1) <= 6 and abs(b[i] - 0x40) <= 6)
mean = [sum(c) / n for c in (r, g, b)]
print("background through --v4l2-out, looped back: %.4f of %d pixels within 6 levels of 0x00B140, mean colour (%.1f, %.1f, %.1f)"
      % (near / n, n, *mean))
sys.exit(0 if n == 640 * 480 and near / n >= 0.98 else 1)'
}
set +e
# 3G: the guest unpacks the debug granite-cam and its libraries, and FFmpeg's (opened by --record), into RAM.
FETCHED="$ROOT/.build/vivid-vm/fetched"
rm -rf "$FETCHED"
FFMPEG=()
# The landscape selfie model (640x480 is wider than tall) and its description, for --segment-model in the guest.
MODELS="$ROOT/.build/vivid-vm/models"
rm -rf "$MODELS"; mkdir -p "$MODELS"
cp "$ROOT"/Models/selfie-segmentation-landscape-144x256.{onnx,json} "$MODELS"/
for lib in libavutil.so.57 libswresample.so.4 libavcodec.so.59 libavformat.so.59; do FFMPEG+=(--pack-lib "/usr/lib/x86_64-linux-gnu/$lib"); done
"$ROOT/scripts/vivid-vm" --timeout 240 --mem 3G --module "snd-aloop pcm_substreams=1" --pack "$(command -v aplay)" --pack-tree /usr/share/alsa --pack-tree "$MODELS" "${FFMPEG[@]}" --fetch "$FETCHED" \
  --vivid "n_devs=2 node_types=0x1,0x101 num_inputs=4,1 input_types=0xe4,0x3 num_outputs=2,1 output_types=0x2,0x1" --pack "$BIN/granite-v4l2-check" --pack "$BIN/granite-cam" -- /bin/sh -c "MODEL=$MODELS/selfie-segmentation-landscape-144x256.onnx; $GUEST"
status=$?
set -e
case $status in
  0) recording a 0 && recording b 1 || { echo "vivid-vm tier: FAIL: the recordings read back (ffprobe) are not what granite-cam said" >&2; exit 1; }
     background_frame || { echo "vivid-vm tier: FAIL: the looped frame is not the background filter's colour" >&2; exit 1; }
     echo "vivid-vm tier: passed" ;;
  97) cannot_run "no kernel with the vivid module (linux-image-amd64)" ;;
  98) echo "vivid-vm tier: FAIL: the guest never reported (see .build/vivid-vm/serial.log)" >&2; exit 1 ;;
  1) echo "vivid-vm tier: FAIL: granite-v4l2-check failed" >&2; exit 1 ;;
  4) echo "vivid-vm tier: FAIL: camera controls (--ctrl, read back, refusals)" >&2; exit 1 ;;
  5) echo "vivid-vm tier: FAIL: --v4l2-out looped back through vivid" >&2; exit 1 ;;
  6) echo "vivid-vm tier: FAIL: --v4l2-out on a capture node was not refused" >&2; exit 1 ;;
  8) echo "vivid-vm tier: FAIL: granite-cam --audio alsa:hw:Loopback,1,0 (snd-aloop): a recording without the sound expected" >&2; exit 1 ;;
  9) echo "vivid-vm tier: FAIL: a second recorder on a busy ALSA PCM was not refused naming it" >&2; exit 1 ;;
  10) echo "vivid-vm tier: FAIL: an ALSA card unbound mid-recording did not end the run cleanly naming the PCM" >&2; exit 1 ;;
  12) echo "vivid-vm tier: FAIL: granite-cam with the background filter (CPU mask) into --v4l2-out, or reading the loop back" >&2; exit 1 ;;
  11) echo "vivid-vm tier: FAIL: an ALSA overrun (granite-cam stopped 1.5 s) was not counted or the recording lost sync" >&2; exit 1 ;;
  7) echo "vivid-vm tier: FAIL: a stream with every buffer dropped did not end after --first-frame-timeout naming the device" >&2; exit 1 ;;
  *) echo "vivid-vm tier: FAIL: granite-cam on vivid failed (status $status)" >&2; exit 1 ;;
esac
