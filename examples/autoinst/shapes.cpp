// The shared library of the autoinst example; see shapes.hpp.
#include "shapes.hpp"

namespace shapes {

Shape::~Shape() = default;

double Circle::area() const { return 3.14159265358979 * radius_ * radius_; }

double Square::area() const { return side_ * side_; }

std::unique_ptr<Shape> make(int kind, double size) {
  if (kind == 0) return std::make_unique<Circle>(size);
  return std::make_unique<Square>(size);
}

double total_area(const std::vector<std::unique_ptr<Shape>>& all) {
  double sum = 0;
  for (const auto& shape : all) sum += shape->area();
  return sum;
}

}  // namespace shapes
