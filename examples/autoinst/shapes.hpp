// The shared library of the autoinst example (libautoinst_shapes.so), also
// compiled with -finstrument-functions: its functions are monitored as well,
// and symbolized from the library rather than the executable.
#pragma once

#include <memory>
#include <vector>

namespace shapes {

class Shape {
 public:
  virtual ~Shape();
  virtual double area() const = 0;
};

class Circle final : public Shape {
 public:
  explicit Circle(double radius) : radius_(radius) {}
  double area() const override;

 private:
  double radius_;
};

class Square final : public Shape {
 public:
  explicit Square(double side) : side_(side) {}
  double area() const override;

 private:
  double side_;
};

// kind 0: a circle of radius `size`; otherwise a square of side `size`.
std::unique_ptr<Shape> make(int kind, double size);

double total_area(const std::vector<std::unique_ptr<Shape>>& all);

}  // namespace shapes
