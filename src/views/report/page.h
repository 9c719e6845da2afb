// The report page: one self-contained HTML document (styles, data, the chart
// library and the page's script inline; no request leaves the page) showing a
// run, or two side by side. Pure functions of the loaded runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "views/report/run_data.h"

namespace tv {

// Text for HTML content and attribute values: & < > " ' escaped.
std::string HtmlEscape(std::string_view text);

// JSON text that can stand inside <script>...</script>: every '<' (so no
// "</script>" or "<!--" ends or bends the element) and U+2028/U+2029 written as
// \u escapes, which JSON reads back as the same characters.
std::string ScriptSafe(std::string_view json);

// The page for `a`, with `b` (may be null) overlaid on its charts and beside it
// in the tables of headline figures. `buckets`: min/max buckets per series.
std::string RenderPage(const ReportRun& a, const ReportRun* b, size_t buckets);

// The page of a job's nodes, one run per node (`job` says which, in the same
// order): every node on one time axis, labelled by its node, a column per node
// in the table of headline figures, and the job's health, findings and cost.
std::string RenderJobPage(const std::vector<ReportRun>& runs, const ReportJob& job, size_t buckets);

}  // namespace tv
