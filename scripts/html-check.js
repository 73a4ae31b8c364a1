// html-check.js is injected by scripts/html-check.sh at the top of a copy of
// an mtstats HTML report, before the page's own scripts. It records what is
// drawn on each chart's canvas (text boxes, line segments by colour), and
// once the page has drawn, checks the page as a reader sees it without a
// pointer (issue 23) and writes one line per finding into
// a pre element with id html-check for the shell to read from --dump-dom:
//   - the header gives the run's start (UTC, ISO 8601) and charts over time
//     have seconds on their x axis, not clock times;
//   - every legend entry and every row of the table under a chart shows a
//     number, not "–";
//   - no two texts drawn on a chart overlap (tick labels, axis labels), the
//     capacity labels are list items under the chart, one per run, that
//     overlap neither each other nor the chart;
//   - the knee's series have their run's colour (as in the throughput
//     chart) and a line joins each run's points.
(() => {
  const drawn = new Map(); // canvas -> {texts: [{text, box}], lines: Map(colour -> segments)}
  const rec = c => { if (!drawn.has(c)) drawn.set(c, {texts: [], lines: new Map()}); return drawn.get(c); };
  const P = CanvasRenderingContext2D.prototype;
  const fillText = P.fillText, lineTo = P.lineTo;
  P.fillText = function (text, x, y, ...rest) {
    const m = this.measureText(text), t = this.getTransform();
    const xs = [], ys = [];
    for (const [px, py] of [[x - m.actualBoundingBoxLeft, y - m.actualBoundingBoxAscent], [x + m.actualBoundingBoxRight, y - m.actualBoundingBoxAscent],
      [x - m.actualBoundingBoxLeft, y + m.actualBoundingBoxDescent], [x + m.actualBoundingBoxRight, y + m.actualBoundingBoxDescent]]) {
      const p = t.transformPoint(new DOMPoint(px, py)); xs.push(p.x); ys.push(p.y);
    }
    if (String(text).trim() !== "") rec(this.canvas).texts.push({text: String(text), box: {l: Math.min(...xs), r: Math.max(...xs), t: Math.min(...ys), b: Math.max(...ys)}});
    return fillText.call(this, text, x, y, ...rest);
  };
  P.lineTo = function (...args) {
    const l = rec(this.canvas).lines, k = String(this.strokeStyle);
    l.set(k, (l.get(k) || 0) + 1);
    return lineTo.apply(this, args);
  };

  const meets = (a, b) => a.l < b.r && b.l < a.r && a.t < b.b && b.t < a.b;
  const rect = e => { const r = e.getBoundingClientRect(); return {l: r.left, r: r.right, t: r.top, b: r.bottom}; };
  const digit = /[0-9]/;
  const out = [];
  const fail = msg => out.push("FAIL " + msg);
  const ok = msg => out.push("ok " + msg);

  function check() {
    const boxes = [...document.querySelectorAll("#charts > .chart")];
    const title = b => (b.querySelector(".title") || b.querySelector(".u-title") || {textContent: "?"}).textContent;
    if (boxes.length === 0) fail("no charts");

    // 1. Run start in the header; seconds, not clock times, on time axes.
    const starts = [...document.querySelectorAll("time.start")].map(e => e.textContent);
    if (starts.length === 0 || !starts.every(s => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(s))) fail("header run start (UTC ISO 8601): " + JSON.stringify(starts));
    else ok("run start " + starts.join(", "));
    for (const b of boxes) {
      if (!/over time|per second/.test(title(b))) continue;
      const c = b.querySelector("canvas"), texts = (drawn.get(c) || {texts: []}).texts.map(t => t.text);
      const clock = texts.filter(t => /\d:\d\d/.test(t));
      if (clock.length) fail(title(b) + ": clock times on the axis: " + clock.slice(0, 3).join(" "));
      else ok(title(b) + ": x in seconds since the start");
    }

    // 4. Numbers without a pointer: legends and tables.
    for (const b of boxes) {
      const vals = [...b.querySelectorAll(".u-legend .u-series")].slice(1).map(s => s.querySelector(".u-value").textContent);
      const bad = vals.filter(v => !digit.test(v));
      if (vals.length === 0 || bad.length) fail(title(b) + ": legend values without a number: " + JSON.stringify(vals));
      const rows = [...b.querySelectorAll("table.values tr")].slice(1);
      const empty = rows.filter(r => ![...r.querySelectorAll("td")].slice(1).some(td => digit.test(td.textContent)));
      if (rows.length === 0 || empty.length) fail(title(b) + ": table rows without a number: " + rows.length + " rows, " + empty.length + " empty");
      if (vals.length && !bad.length && rows.length && !empty.length) ok(title(b) + ": " + vals.length + " legend values, " + rows.length + " table rows");
    }

    // 2. No overlapping labels.
    for (const b of boxes) {
      const texts = (drawn.get(b.querySelector("canvas")) || {texts: []}).texts;
      for (let i = 0; i < texts.length; i++)
        for (let j = i + 1; j < texts.length; j++)
          if (meets(texts[i].box, texts[j].box)) fail(title(b) + ": texts overlap on the chart: " + JSON.stringify(texts[i].text) + " and " + JSON.stringify(texts[j].text));
      const marks = [...b.querySelectorAll(".mark")], plot = rect(b.querySelector(".uplot"));
      for (let i = 0; i < marks.length; i++) {
        if (meets(rect(marks[i]), plot)) fail(title(b) + ": label " + JSON.stringify(marks[i].textContent) + " overlaps the chart");
        for (let j = i + 1; j < marks.length; j++)
          if (meets(rect(marks[i]), rect(marks[j]))) fail(title(b) + ": labels overlap: " + JSON.stringify(marks[i].textContent) + " and " + JSON.stringify(marks[j].textContent));
      }
      if (marks.length) ok(title(b) + ": " + marks.length + " mark labels apart");
    }
    const thr = boxes.find(b => title(b) === "Throughput by stage");
    const runs = Number(document.body.dataset.checkRuns || 0);
    if (thr && runs > 1) {
      const n = thr.querySelectorAll(".mark").length;
      if (n !== runs) fail("Throughput by stage: " + n + " capacity labels for " + runs + " runs");
    }

    // 3. The knee: run colours, joined points.
    const knee = boxes.find(b => title(b).startsWith("Latency against throughput"));
    if (thr && knee) {
      const legend = b => [...b.querySelectorAll(".u-legend .u-series")].slice(1).map(s => ({
        label: s.querySelector(".u-label").textContent.trim(), colour: getComputedStyle(s.querySelector(".u-marker")).borderTopColor}));
      const runColour = new Map(legend(thr).map(s => [s.label.replace(/ throughput$/, ""), s.colour]));
      const lines = drawn.get(knee.querySelector("canvas")).lines;
      const hex = c => "#" + c.match(/\d+/g).slice(0, 3).map(v => Number(v).toString(16).padStart(2, "0")).join("");
      let good = 0;
      for (const s of legend(knee)) {
        const run = runs > 1 ? s.label.replace(/ (TTFT p95|latency p50)$/, "") : "throughput";
        const want = runs > 1 ? runColour.get(run) : legend(thr)[0].colour;
        if (s.colour !== want) fail("knee: " + s.label + " in " + s.colour + ", its run's colour is " + want);
        else if (!(lines.get(hex(s.colour)) > 0)) fail("knee: no line joins the points of " + s.label);
        else good++;
      }
      if (good) ok("knee: " + good + " series in their run's colour, joined");
    }
  }
  window.addEventListener("load", () => setTimeout(() => {
    try { check(); } catch (e) { fail("check error: " + e); }
    const pre = document.createElement("pre");
    pre.id = "html-check"; pre.textContent = out.join("\n");
    document.body.appendChild(pre);
  }, 200));
})();
