// A shared library built with -finstrument-functions, called by autoinst.
extern "C" [[gnu::noinline]] int shapes_area(int w, int h) { return w * h; }
