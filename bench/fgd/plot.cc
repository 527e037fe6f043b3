#include "bench/fgd/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gantry/util/strings.h"

namespace gantry::fgd {
namespace {

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Stat {
  bool ok = false;
  double mean = 0, lo = 0, hi = 0;
};

Stat At(const PlotSeries& s, int x) {
  Stat st;
  int n = 0;
  for (const auto& run : s.runs) {
    if (x < 0 || x >= static_cast<int>(run.size()) || !run[x]) continue;
    const double v = *run[x];
    if (n == 0) st.lo = st.hi = v;
    st.lo = std::min(st.lo, v);
    st.hi = std::max(st.hi, v);
    st.mean += v;
    ++n;
  }
  if (n > 0) {
    st.ok = true;
    st.mean /= n;
  }
  return st;
}

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2"};

}  // namespace

std::string RenderSvg(const std::vector<PlotSeries>& series, const std::string& title, int from,
                      int to) {
  if (to <= from) to = from + 1;
  const double W = 760, H = 460, left = 70, right = 200, top = 40, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  double ymax = 1;
  for (const PlotSeries& s : series) {
    for (int x = from; x <= to; ++x) {
      Stat st = At(s, x);
      if (st.ok) ymax = std::max(ymax, st.hi);
    }
  }
  ymax = std::ceil(ymax / 5.0) * 5.0;
  auto X = [&](double x) { return left + (x - from) / (to - from) * pw; };
  auto Y = [&](double y) { return top + ph - y / ymax * ph; };
  std::string svg = gantry::StrCat("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", W,
                                   "\" height=\"", H, "\" viewBox=\"0 0 ", W, " ", H,
                                   "\" font-family=\"sans-serif\" font-size=\"12\">\n");
  svg += gantry::StrCat("<rect width=\"", W, "\" height=\"", H, "\" fill=\"white\"/>\n");
  svg += gantry::StrCat("<text x=\"", W / 2, "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">",
                        Escape(title), "</text>\n");
  // Grid and ticks.
  const double ystep = ymax <= 10 ? 1 : ymax <= 30 ? 5 : 10;
  for (double y = 0; y <= ymax + 1e-9; y += ystep) {
    svg += gantry::StrCat("<line x1=\"", Num(left), "\" y1=\"", Num(Y(y)), "\" x2=\"",
                          Num(left + pw), "\" y2=\"", Num(Y(y)), "\" stroke=\"#ddd\"/>\n");
    svg += gantry::StrCat("<text x=\"", Num(left - 6), "\" y=\"", Num(Y(y) + 4),
                          "\" text-anchor=\"end\">", y, "</text>\n");
  }
  const int xstep = (to - from) > 40 ? 10 : 5;
  for (int x = (from + xstep - 1) / xstep * xstep; x <= to; x += xstep) {
    svg += gantry::StrCat("<line x1=\"", Num(X(x)), "\" y1=\"", Num(top), "\" x2=\"", Num(X(x)),
                          "\" y2=\"", Num(top + ph), "\" stroke=\"", x == 100 ? "#999" : "#eee",
                          "\"/>\n");
    svg += gantry::StrCat("<text x=\"", Num(X(x)), "\" y=\"", Num(top + ph + 18),
                          "\" text-anchor=\"middle\">", x, "</text>\n");
  }
  svg += gantry::StrCat("<rect x=\"", Num(left), "\" y=\"", Num(top), "\" width=\"", Num(pw),
                        "\" height=\"", Num(ph), "\" fill=\"none\" stroke=\"#333\"/>\n");
  svg += gantry::StrCat(
      "<text x=\"", Num(left + pw / 2), "\" y=\"", Num(H - 18),
      "\" text-anchor=\"middle\">Arrived GPU demand (% of cluster GPU capacity)</text>\n");
  svg += gantry::StrCat("<text transform=\"translate(18,", Num(top + ph / 2),
                        ") rotate(-90)\" text-anchor=\"middle\">Unallocated GPU (%)</text>\n");
  for (size_t i = 0; i < series.size(); ++i) {
    const PlotSeries& s = series[i];
    const char* color = kColors[i % (sizeof kColors / sizeof kColors[0])];
    std::string upper, lower, line;
    for (int x = from; x <= to; ++x) {
      Stat st = At(s, x);
      if (!st.ok) continue;
      upper += gantry::StrCat(upper.empty() ? "" : " ", Num(X(x)), ",", Num(Y(st.hi)));
      lower = gantry::StrCat(Num(X(x)), ",", Num(Y(st.lo)), lower.empty() ? "" : " ", lower);
      line += gantry::StrCat(line.empty() ? "" : " ", Num(X(x)), ",", Num(Y(st.mean)));
    }
    if (line.empty()) continue;
    svg += gantry::StrCat("<polygon points=\"", upper, " ", lower, "\" fill=\"", color,
                          "\" fill-opacity=\"0.15\" stroke=\"none\"/>\n");
    svg += gantry::StrCat("<polyline points=\"", line, "\" fill=\"none\" stroke=\"", color,
                          "\" stroke-width=\"2\"/>\n");
    Stat at100 = At(s, 100);
    const double ly = top + 10 + 20 * static_cast<double>(i);
    svg += gantry::StrCat("<line x1=\"", Num(left + pw + 12), "\" y1=\"", Num(ly), "\" x2=\"",
                          Num(left + pw + 36), "\" y2=\"", Num(ly), "\" stroke=\"", color,
                          "\" stroke-width=\"3\"/>\n");
    svg += gantry::StrCat(
        "<text x=\"", Num(left + pw + 42), "\" y=\"", Num(ly + 4), "\">", Escape(s.label),
        at100.ok ? gantry::StrCat(" (", Num(at100.mean), "% at 100)") : "", "</text>\n");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace gantry::fgd
