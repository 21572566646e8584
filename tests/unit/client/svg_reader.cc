// See svg_reader.h.
#include "svg_reader.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace kbench::client::testing {
namespace {

bool DecodeEntities(const std::string& in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '<') return false;
    if (in[i] != '&') {
      *out += in[i];
      continue;
    }
    const size_t semi = in.find(';', i);
    if (semi == std::string::npos) return false;
    const std::string ent = in.substr(i + 1, semi - i - 1);
    static const std::map<std::string, char> kNamed = {{"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'},
                                                       {"apos", '\''}};
    if (auto it = kNamed.find(ent); it != kNamed.end()) {
      *out += it->second;
    } else if (ent.size() > 1 && ent[0] == '#') {
      int code = 0;
      if (!absl::SimpleAtoi(ent.substr(1), &code) || code <= 0 || code > 127) return false;
      *out += static_cast<char>(code);
    } else {
      return false;
    }
    i = semi;
  }
  return true;
}

}  // namespace

Document ParseXml(const std::string& xml) {
  Document doc;
  std::vector<size_t> open;  // Indices into doc.elements.
  size_t i = 0;
  bool root_closed = false;
  auto fail = [&](const std::string& why) {
    doc.error = why + " at offset " + std::to_string(i);
    return doc;
  };
  while (i < xml.size()) {
    if (xml[i] != '<') {
      const size_t next = xml.find('<', i);
      const std::string raw = xml.substr(i, next == std::string::npos ? std::string::npos : next - i);
      std::string text;
      if (!DecodeEntities(raw, &text)) return fail("bad character data");
      if (open.empty()) {
        if (raw.find_first_not_of(" \n\r\t") != std::string::npos) return fail("text outside the root");
      } else {
        doc.elements[open.back()].text += text;
      }
      if (next == std::string::npos) break;
      i = next;
      continue;
    }
    if (xml.compare(i, 5, "<?xml") == 0) {
      if (i != 0) return fail("XML declaration not at the start");
      const size_t end = xml.find("?>", i);
      if (end == std::string::npos) return fail("unterminated declaration");
      i = end + 2;
      continue;
    }
    if (xml.compare(i, 4, "<!--") == 0) {
      const size_t end = xml.find("-->", i);
      if (end == std::string::npos) return fail("unterminated comment");
      i = end + 3;
      continue;
    }
    const size_t end = xml.find('>', i);
    if (end == std::string::npos) return fail("unterminated tag");
    std::string tag = xml.substr(i + 1, end - i - 1);
    if (!tag.empty() && tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || doc.elements[open.back()].name != name) return fail("mismatched </" + name + ">");
      open.pop_back();
      if (open.empty()) root_closed = true;
      i = end + 1;
      continue;
    }
    if (root_closed) return fail("a second root element");
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.pop_back();
    Element e;
    size_t p = tag.find_first_of(" \n\t");
    e.name = tag.substr(0, p);
    if (e.name.empty() || !std::isalpha(static_cast<unsigned char>(e.name[0]))) return fail("bad element name");
    while (p != std::string::npos && p < tag.size()) {
      p = tag.find_first_not_of(" \n\t", p);
      if (p == std::string::npos) break;
      const size_t eq = tag.find('=', p);
      if (eq == std::string::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') return fail("unquoted attribute");
      const std::string name = tag.substr(p, eq - p);
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos) return fail("unterminated attribute");
      std::string value;
      if (!DecodeEntities(tag.substr(eq + 2, close - eq - 2), &value)) return fail("bad attribute value");
      if (!e.attrs.emplace(name, value).second) return fail("duplicate attribute " + name);
      p = close + 1;
    }
    for (size_t k : open) e.path.push_back(doc.elements[k].name);
    doc.elements.push_back(std::move(e));
    if (!self_closing) open.push_back(doc.elements.size() - 1);
    else if (open.empty()) root_closed = true;
    i = end + 1;
  }
  if (!open.empty()) return fail("unclosed <" + doc.elements[open.back()].name + ">");
  if (doc.elements.empty()) return fail("no root element");
  return doc;
}

double Attr(const Element& e, const std::string& name) {
  double v = NAN;
  auto it = e.attrs.find(name);
  if (it == e.attrs.end() || !absl::SimpleAtod(it->second, &v)) ADD_FAILURE() << "<" << e.name << "> " << name;
  return v;
}

std::vector<std::pair<double, double>> PolylinePoints(const Element& e) {
  std::vector<std::pair<double, double>> out;
  for (absl::string_view pair : absl::StrSplit(e.attrs.at("points"), ' ', absl::SkipEmpty())) {
    std::pair<std::string, std::string> xy = absl::StrSplit(pair, ',');
    double x = NAN, y = NAN;
    EXPECT_TRUE(absl::SimpleAtod(xy.first, &x) && absl::SimpleAtod(xy.second, &y)) << pair;
    out.emplace_back(x, y);
  }
  return out;
}

bool HasClass(const Element& e, const std::string& cls) {
  auto it = e.attrs.find("class");
  return it != e.attrs.end() && it->second == cls;
}

// Every coordinate of every element is a finite number inside the viewBox.
void ExpectInsideViewBox(const Document& doc) {
  const Element& root = doc.elements.front();
  std::vector<std::string> box = absl::StrSplit(root.attrs.at("viewBox"), ' ');
  ASSERT_EQ(box.size(), 4u);
  double w = 0, h = 0;
  ASSERT_TRUE(absl::SimpleAtod(box[2], &w) && absl::SimpleAtod(box[3], &h));
  auto inside = [&](double v, double limit, const Element& e, const std::string& a) {
    EXPECT_TRUE(std::isfinite(v)) << "<" << e.name << "> " << a;
    EXPECT_GE(v, 0) << "<" << e.name << "> " << a;
    EXPECT_LE(v, limit) << "<" << e.name << "> " << a;
  };
  int checked = 0;
  for (const auto& e : doc.elements) {
    for (const char* a : {"x", "x1", "x2", "cx"})
      if (e.attrs.count(a)) inside(Attr(e, a), w, e, a), ++checked;
    for (const char* a : {"y", "y1", "y2", "cy"})
      if (e.attrs.count(a)) inside(Attr(e, a), h, e, a), ++checked;
    if (e.name == "polyline")
      for (auto [x, y] : PolylinePoints(e)) inside(x, w, e, "points"), inside(y, h, e, "points"), ++checked;
  }
  EXPECT_GT(checked, 50);
}

}  // namespace kbench::client::testing
