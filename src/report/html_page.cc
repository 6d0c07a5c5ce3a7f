// The HTML pages' opening (title, styles) and end (footer, the one inline script): no network, no
// external file.
#include "report/html_parts.h"

namespace gpudoctor {

std::string htmlPageStart() {
  return R"(<!doctype html><html lang=en><head><meta charset=utf-8><title>gpudoctor report</title><style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:980px;color:#212529}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #dee2e6}h3{font-size:15px;margin-top:18px}
.f{border-left:4px solid #adb5bd;padding:6px 12px;margin:10px 0;background:#f8f9fa}
.critical{border-color:#c92a2a}.warning{border-color:#f08c00}.info{border-color:#1971c2}.ok{border-color:#2b8a3e}
pre{background:#212529;color:#f8f9fa;padding:8px;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
table{border-collapse:collapse;max-width:100%}.wrap{overflow-x:auto;max-width:100%}
td,th{border:1px solid #dee2e6;padding:3px 8px;text-align:left}.lbl{font-size:12px}
svg.chart{max-width:100%;height:auto}.tick{font-size:11px;fill:#495057}.grid{stroke:#e9ecef;stroke-width:1}
.stepline{stroke:#adb5bd;stroke-width:1;stroke-dasharray:2,3}
td.name{max-width:520px;font-family:monospace;font-size:12px;overflow-wrap:anywhere}
.legend span{margin-right:14px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.legend i.ln{width:18px;height:0;vertical-align:middle}
table.sortable th{cursor:pointer}details{margin:6px 0}summary{cursor:pointer;font-size:13px}
.pass{color:#2b8a3e}.fail{color:#c92a2a}
</style></head><body>)";
}

// The script: menus (select.pick) show one element of their group at a time; a click on a sortable
// table's heading sorts its rows (by data-v where the cells have it, else by text); the body records
// how many charts it holds and whether the page scrolls sideways (scripts/checks/check_html_in_browser.sh).
std::string htmlPageEnd() {
  return "<p><small>Made by gpudoctor " GPUDOCTOR_VERSION
         ". Definitions of every figure: docs/reference/analyze.md, Definitions.</small></p>"
         "<script>(function(){"
         "document.querySelectorAll('select.pick').forEach(function(p){p.onchange=function(){"
         "document.querySelectorAll('[data-group=\"'+p.dataset.group+'\"]').forEach(function(s){"
         "s.style.display=s.id===p.value?'':'none';});};});"
         "document.querySelectorAll('table.sortable th').forEach(function(h){h.onclick=function(){"
         "var t=h.closest('table'),b=t.tBodies[0],c=h.cellIndex,d=h.dataset.dir=h.dataset.dir==='d'?'a':'d';"
         "var rows=[].slice.call(t.rows,1);rows.sort(function(x,y){var p=x.cells[c],q=y.cells[c];"
         "var r=p.dataset.v!==undefined&&q.dataset.v!==undefined?p.dataset.v-q.dataset.v:"
         "p.textContent.localeCompare(q.textContent);return d==='d'?-r:r;});"
         "rows.forEach(function(r){b.appendChild(r);});};});"
         "var b=document.body;b.dataset.rendered=document.querySelectorAll('svg.chart').length;"
         "b.dataset.overflow=document.documentElement.scrollWidth>document.documentElement.clientWidth?1:0;})()</"
         "script>"
         "</body></html>\n";
}

}  // namespace gpudoctor
