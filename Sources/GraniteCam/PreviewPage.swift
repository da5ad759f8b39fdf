import Crypto

/// The preview page: one self-contained HTML document (no external resources — the machine the
/// camera is on may have no network), its one style and one script allowed by hash in a strict
/// Content-Security-Policy, so nothing injected into the page could run.
///
/// The page reads the status from `/events` (Server-Sent Events: pushed at each status render,
/// one standing connection, reconnected by the browser on its own — no polling delay or request
/// per update), shows `/stream` and, when the run estimates depth, `/depth`; with `--segments`
/// it plays the live playlist (`/live/live.m3u8`) in a `<video>` where the browser plays HLS itself
/// (`canPlayType("application/vnd.apple.mpegurl")`: Safari, Chromium 156 on Debian 12) and says
/// where else to open it where it does not (Firefox: the page loads no player library); its snapshot button
/// and chain box POST to `/snapshot` and `/chain`, and their answers come back in the status.
enum PreviewPage {
    static let style = """
        body{background:#111;color:#ddd;font:14px/1.4 system-ui,sans-serif;margin:1em}
        [hidden]{display:none!important}
        .pics{display:flex;flex-wrap:wrap;gap:1em}
        figure{margin:0;flex:1 1 320px;max-width:100%}
        img,video{width:100%;background:#000;display:block}
        figcaption{color:#888;font-size:12px}
        dl{display:grid;grid-template-columns:repeat(auto-fill,minmax(9em,1fr));gap:.2em 1em;margin:1em 0}
        dt{color:#888;font-size:12px}dd{margin:0;font:16px monospace}
        #line{font:12px monospace;color:#aaa;white-space:pre-wrap}
        form{display:flex;gap:.5em;flex-wrap:wrap;align-items:center;margin:.5em 0}
        input{flex:1 1 20em;font:14px monospace;background:#222;color:#eee;border:1px solid #555;padding:.3em}
        button{font:14px system-ui,sans-serif;padding:.3em 1em}
        .bad{color:#f77}code{color:#9cf}
        """

    static let script = """
        "use strict";
        const $ = (id) => document.getElementById(id);
        const fields = ["frames", "fps", "latencyP50", "latencyP99", "dropped", "depthFPS", "depthAge", "saved", "format"];
        let typed = false, waiting = null;
        $("chain").addEventListener("input", () => { typed = true; });
        function show(s) {
          for (const f of fields) $(f).textContent = s[f] === null || s[f] === undefined ? "\\u2013" : String(s[f]);
          $("line").textContent = s.line;
          $("fault").textContent = s.fault || "";
          $("current").textContent = s.chain === null ? "(fixed for this run)" : (s.chain || "(none)");
          $("notice").textContent = s.notice || "";
          $("state").textContent = s.ended ? "ended" : "live";
          const answered = s.chainsApplied + s.chainsRejected;
          if (waiting !== null && answered > waiting) {
            waiting = null;
            $("chainError").textContent = s.chainError || "";
            if (!s.chainError) typed = false;
          }
          if (!typed && waiting === null && s.chain !== null) $("chain").value = s.chain;
          if (s.livePlaylist && !$("liveBox").dataset.hls) {
            const video = $("hls"), url = location.origin + s.livePlaylist;
            const can = video.canPlayType("application/vnd.apple.mpegurl");
            $("liveBox").dataset.canPlay = can;
            $("liveBox").hidden = false;
            if (can) {
              $("liveBox").dataset.hls = "native";
              video.src = s.livePlaylist;
              $("hlsNote").textContent = "the live segments, as recorded (HLS: " + url + ")";
            } else {
              $("liveBox").dataset.hls = "unsupported";
              video.hidden = true;
              $("hlsNote").textContent = "This browser does not play HLS itself (Safari and recent Chromium do; Firefox needs a "
                + "player library, which this page does not load): open " + url + " in mpv, VLC or ffplay.";
            }
          }
          if (s.depthEnabled && !$("depth").getAttribute("src")) {
            $("depth").setAttribute("src", "/depth");
            $("depthBox").hidden = false;
            if (s.mapName === "mask") {
              $("depth").setAttribute("alt", "person mask");
              $("depthCaption").textContent = "person mask (white = person)";
            }
          }
          $("page").dataset.updates = String(Number($("page").dataset.updates || 0) + 1);
          $("page").dataset.answered = String(answered);
        }
        const events = new EventSource("/events");
        events.onmessage = (e) => show(JSON.parse(e.data));
        events.onerror = () => { $("state").textContent = "disconnected"; };
        async function post(path, body) {
          try {
            const r = await fetch(path, { method: "POST", body: body, headers: { "Content-Type": "text/plain" } });
            if (!r.ok) $("notice").textContent = path + ": " + r.status + " " + (await r.text());
          } catch (err) {
            $("notice").textContent = path + ": " + err;
          }
        }
        $("snap").addEventListener("click", () => post("/snapshot", ""));
        $("form").addEventListener("submit", (e) => {
          e.preventDefault();
          waiting = Number($("page").dataset.answered || 0);
          $("chainError").textContent = "";
          post("/chain", $("chain").value);
        });
        """

    static let html = """
        <!doctype html><html lang="en"><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width,initial-scale=1">
        <title>granite-cam preview</title><style>\(style)</style></head>
        <body><main id="page">
        <section class="pics">
        <figure><img id="live" src="/stream" alt="live picture"><figcaption>processed frames \u{00B7} <span id="state">connecting</span></figcaption></figure>
        <figure id="depthBox" hidden><img id="depth" alt="depth map"><figcaption id="depthCaption">depth (yellow = near)</figcaption></figure>
        <figure id="liveBox" hidden><video id="hls" controls muted autoplay playsinline></video><figcaption id="hlsNote"></figcaption></figure>
        </section>
        <dl>
        <div><dt>frames</dt><dd id="frames">\u{2013}</dd></div>
        <div><dt>fps</dt><dd id="fps">\u{2013}</dd></div>
        <div><dt>latency p50 ms</dt><dd id="latencyP50">\u{2013}</dd></div>
        <div><dt>latency p99 ms</dt><dd id="latencyP99">\u{2013}</dd></div>
        <div><dt>dropped</dt><dd id="dropped">\u{2013}</dd></div>
        <div><dt>depth fps</dt><dd id="depthFPS">\u{2013}</dd></div>
        <div><dt>depth age (frames)</dt><dd id="depthAge">\u{2013}</dd></div>
        <div><dt>saved</dt><dd id="saved">\u{2013}</dd></div>
        <div><dt>format</dt><dd id="format">\u{2013}</dd></div>
        </dl>
        <p id="line"></p><p id="fault" class="bad"></p>
        <section>
        <button id="snap" type="button">Snapshot</button> <span id="notice"></span>
        <form id="form"><label for="chain">Filter chain</label>
        <input id="chain" name="chain" autocomplete="off" spellcheck="false" placeholder="blur:sigma=2 | sobel">
        <button id="apply" type="submit">Apply</button></form>
        <p>in use: <code id="current"></code></p><p id="chainError" class="bad"></p>
        </section>
        </main><script>\(script)</script></body></html>
        """

    /// The page's Content-Security-Policy: nothing but this origin's images and connections,
    /// the page's own style and script by SHA-256, no forms, frames, plugins or base URL.
    static let contentSecurityPolicy = [
        "default-src 'none'", "img-src 'self'", "media-src 'self'", "connect-src 'self'",
        "script-src '\(hash(script))'", "style-src '\(hash(style))'",
        "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    /// Headers sent with the page.
    static let headers: [(String, String)] = [
        ("Content-Security-Policy", contentSecurityPolicy), ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "no-referrer"), ("Cross-Origin-Opener-Policy", "same-origin"),
        ("Cross-Origin-Resource-Policy", "same-origin"),
    ]

    /// A CSP hash source: `sha256-` and the base64 of the text's UTF-8 SHA-256.
    static func hash(_ text: String) -> String {
        "sha256-" + base64(Array(SHA256.hash(data: Array(text.utf8))))
    }

    static func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var word = UInt32(bytes[i]) << 16
            if n > 1 { word |= UInt32(bytes[i + 1]) << 8 }
            if n > 2 { word |= UInt32(bytes[i + 2]) }
            for k in 0..<4 { out.append(k <= n ? alphabet[Int((word >> (18 - 6 * k)) & 63)] : "=") }
            i += 3
        }
        return out
    }
}
