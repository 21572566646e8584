// A main() for the fuzz targets where libFuzzer is absent (the g++ build): runs LLVMFuzzerTestOneInput
// on every file named, or in a directory named, so that `make test` replays the committed corpora and
// the reproducers of fixed bugs. Fails when a directory is empty or a file cannot be read (a replay
// of nothing would pass whatever the parser does).
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool Replay(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
    return false;
  }
  // A copy of exactly the file's bytes on the heap, so that ASan would see a read past its end.
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(data.data(), data.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\nRuns the fuzz target on each input once.\n", argv[0]);
    return 2;
  }
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg = argv[i];
    std::vector<std::filesystem::path> inputs;
    if (std::filesystem::is_directory(arg)) {
      for (const auto& e : std::filesystem::directory_iterator(arg))
        if (e.is_regular_file()) inputs.push_back(e.path());
    } else {
      inputs.push_back(arg);
    }
    for (const auto& f : inputs) {
      if (!Replay(f)) return 1;
      ++files;
    }
  }
  if (files == 0) {
    std::fprintf(stderr, "replay: no input files\n");
    return 1;
  }
  std::printf("replay: %d inputs ran without a crash\n", files);
  return 0;
}
