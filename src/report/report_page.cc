#include "report/report_page.h"

#include <fstream>
#include <sstream>

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

// Splits the template at `marker` (which must be there once) and puts `text` in its place: the template is
// searched, never the inserted text, so data that happens to contain a marker cannot be expanded.
std::string fill(const std::string& page, const std::string& marker, const std::string& text) {
  const size_t at = page.find(marker);
  if (at == std::string::npos) throw InternalError("report template lacks " + marker);
  return page.substr(0, at) + text + page.substr(at + marker.size());
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
  std::string data = nlohmann::json(runs).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  replace_all(&data, "</", "<\\/");
  std::string page = kReportPageTemplate;
  replace_all(&page, "/*TESSERA_TITLE*/", html_escape(title));
  page = fill(page, "/*TESSERA_CHART_JS*/", library);
  // After the library: a marker in Chart.js's text is not looked for.
  const size_t data_at = page.find("/*TESSERA_RUNS*/", page.find("</script>"));
  if (data_at == std::string::npos) throw InternalError("report template lacks /*TESSERA_RUNS*/");
  return page.substr(0, data_at) + data + page.substr(data_at + std::string("/*TESSERA_RUNS*/").size());
}

}  // namespace tessera::report
