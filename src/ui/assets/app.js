// The review page's keyboard: j/k move, y/n label the current decision right/wrong, c edits
// its note, o opens its details. Every value read from the page is set back with textContent,
// never as markup.
"use strict";
(function () {
  const rows = Array.from(document.querySelectorAll("li.decision"));
  const status = document.getElementById("status");
  let current = -1;

  function say(text) { if (status) status.textContent = text; }

  function select(i) {
    if (rows.length === 0) return;
    i = Math.max(0, Math.min(rows.length - 1, i));
    if (current >= 0) rows[current].classList.remove("current");
    current = i;
    const row = rows[current];
    row.classList.add("current");
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: "nearest" });
  }

  async function mark(row, verdict) {
    const note = row.querySelector("input.note");
    const body = { record: row.dataset.record, verdict: verdict, note: note ? note.value : "" };
    say("saving…");
    try {
      const resp = await fetch("/ui/labels", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-Guardian-UI": "1" },
        body: JSON.stringify(body),
      });
      const answer = await resp.json();
      if (!resp.ok) {
        say("not saved: " + (answer.error ? answer.error.message : resp.status));
        return false;
      }
      row.classList.remove("labelled-right", "labelled-wrong");
      row.classList.add("labelled-" + verdict);
      row.querySelector(".label-state").textContent = verdict;
      row.querySelector(".label-by").textContent = answer.labeller + " at " + answer.time;
      say("#" + row.dataset.seq + " labelled " + verdict);
      return true;
    } catch (e) {
      say("not saved: " + e);
      return false;
    }
  }

  document.addEventListener("keydown", async function (ev) {
    const typing = ev.target instanceof HTMLInputElement || ev.target instanceof HTMLSelectElement;
    if (typing) {
      if (ev.key === "Escape" || (ev.key === "Enter" && ev.target.classList.contains("note"))) {
        ev.preventDefault();
        ev.target.blur();
        if (current >= 0) rows[current].focus({ preventScroll: true });
      }
      return;
    }
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    switch (ev.key) {
      case "j": ev.preventDefault(); select(current + 1); break;
      case "k": ev.preventDefault(); select(current - 1); break;
      case "y":
      case "n":
        if (current < 0) { select(0); }
        ev.preventDefault();
        if (await mark(rows[current], ev.key === "y" ? "right" : "wrong")) select(current + 1);
        break;
      case "c":
        if (current < 0) select(0);
        ev.preventDefault();
        rows[current].querySelector("input.note").focus();
        break;
      case "o":
        if (current >= 0) {
          const d = rows[current].querySelector("details");
          d.open = !d.open;
        }
        break;
    }
  });

  rows.forEach(function (row, i) {
    row.addEventListener("click", function () { if (current !== i) select(i); });
    row.querySelectorAll("button.mark").forEach(function (b) {
      b.addEventListener("click", function () { mark(row, b.dataset.verdict); });
    });
  });
  if (rows.length > 0) select(0);
})();
