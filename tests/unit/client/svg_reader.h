// A small XML reader for the Roofline SVG tests: enough to check well-formedness and read elements
// and attributes, and the checks on coordinates that the chart tests share.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kbench::client::testing {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::string text;             // Character data directly inside, entities decoded.
  std::vector<std::string> path;  // Names of the enclosing elements, outermost first.
};

struct Document {
  std::string error;  // Empty when well-formed.
  std::vector<Element> elements;  // In document order; elements[0] is the root.
  std::vector<const Element*> All(const std::string& name) const {
    std::vector<const Element*> out;
    for (const auto& e : elements)
      if (e.name == name) out.push_back(&e);
    return out;
  }
};

// Parses xml; Document::error says why it is not well-formed.
Document ParseXml(const std::string& xml);
// A numeric attribute (a test failure when absent or not a number).
double Attr(const Element& e, const std::string& name);
// A <polyline>'s points.
std::vector<std::pair<double, double>> PolylinePoints(const Element& e);
bool HasClass(const Element& e, const std::string& cls);
// Every coordinate of every element is a finite number inside the viewBox.
void ExpectInsideViewBox(const Document& doc);

}  // namespace kbench::client::testing
