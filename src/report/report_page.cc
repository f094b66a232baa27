#include "report/report_page.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "report/report_page_template.h"
#include "tessera/base/error.h"

namespace tessera::report {
namespace {

void replace_all(std::string* text, const std::string& from, const std::string& to) {
  for (size_t at = text->find(from); at != std::string::npos; at = text->find(from, at + to.size()))
    text->replace(at, from.size(), to);
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// The template with each marker replaced by its text, in one pass over the template: inserted text is never
// searched, so data or a title that happens to contain a marker stays as it is.
std::string fill(const std::string& page, const std::vector<std::pair<std::string, std::string>>& markers) {
  std::string out;
  size_t from = 0;
  for (;;) {
    size_t at = std::string::npos;
    const std::pair<std::string, std::string>* next = nullptr;
    for (const auto& m : markers) {
      const size_t found = page.find(m.first, from);
      if (found < at) at = found, next = &m;
    }
    if (next == nullptr) return out + page.substr(from);
    out += page.substr(from, at - from) + next->second;
    from = at + next->first.size();
  }
}

}  // namespace

std::string read_chart_js(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read Chart.js at {}: install Debian's libjs-chart.js (scripts/install-deps does), or name "
                "another copy with --chart-js", path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string render_page(const std::vector<nlohmann::json>& runs, const std::string& chart_js,
                        const std::string& title) {
  std::string library = chart_js;
  replace_all(&library, "https://", "");
  replace_all(&library, "http://", "");
  // Neither may end the <script> element that holds it early.
  replace_all(&library, "</script", "<\\/script");
  // No '<' at all in the data: nothing in it can end or re-open the <script> element that holds it.
  std::string data = nlohmann::json(runs).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  replace_all(&data, "<", "\\u003c");
  return fill(kReportPageTemplate,
              {{"/*TESSERA_TITLE*/", html_escape(title)}, {"/*TESSERA_CHART_JS*/", library}, {"/*TESSERA_RUNS*/", data}});
}

}  // namespace tessera::report
