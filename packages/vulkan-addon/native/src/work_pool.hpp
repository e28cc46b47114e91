// A few threads kept for the whole process, shared by the parser (records in parallel) and the
// host copies, so a decode pays no thread start-up. Header-only: the parser's standalone test,
// fuzz and leak builds link nothing else. One job at a time: a call that finds the pool busy
// (another decode on another thread) runs its tasks on its own thread instead of waiting.
#pragma once
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sgfp4 {

class WorkPool {
 public:
  // The process-wide pool (never destroyed: threads must not be torn down from static destructors).
  static WorkPool& shared() {
    static WorkPool* pool = new WorkPool(std::min<unsigned>(16, std::max(1u, std::thread::hardware_concurrency())));
    return *pool;
  }
  // Threads a job may use, the caller's included.
  size_t threads() const { return workers_.size() + 1; }

  // Runs task(0) .. task(n - 1), on the pool's threads and the caller's; returns when all are
  // done. The first exception a task throws (by task index) is rethrown here after all finish.
  void run(size_t n, const std::function<void(size_t)>& task) {
    std::vector<std::exception_ptr> errors(n);
    const std::function<void(size_t)> guarded = [&](size_t i) {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    };
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (n <= 1 || workers_.empty() || !busy.owns_lock()) {
      for (size_t i = 0; i < n; i++) guarded(i);
    } else {
      {
        std::lock_guard<std::mutex> lock(m_);
        job_ = &guarded;
        count_ = n;
        next_.store(0);
        done_ = 0;
        generation_++;
      }
      start_.notify_all();
      work(guarded, n);
      std::unique_lock<std::mutex> lock(m_);
      // Also until no worker is still inside this job, so none can take a task of the next one.
      finished_.wait(lock, [&] { return done_ == n && active_ == 0; });
      job_ = nullptr;
    }
    for (auto& e : errors)
      if (e) std::rethrow_exception(e);
  }

 private:
  explicit WorkPool(unsigned threads) {
    for (unsigned t = 1; t < threads; t++) {
      try {
        workers_.emplace_back([this] { loop(); });
      } catch (...) {
        break;  // fewer threads then
      }
    }
    for (auto& w : workers_) w.detach();
  }
  // Takes tasks until none are left; counts the ones it finished.
  void work(const std::function<void(size_t)>& task, size_t n) {
    size_t mine = 0;
    for (size_t i; (i = next_.fetch_add(1)) < n; mine++) task(i);
    std::lock_guard<std::mutex> lock(m_);
    done_ += mine;
    if (done_ == n) finished_.notify_all();
  }
  void loop() {
    size_t seen = 0;
    for (;;) {
      const std::function<void(size_t)>* job;
      size_t n;
      {
        std::unique_lock<std::mutex> lock(m_);
        start_.wait(lock, [&] { return generation_ != seen && job_ != nullptr; });
        seen = generation_;
        job = job_;
        n = count_;
        active_++;
      }
      work(*job, n);
      std::lock_guard<std::mutex> lock(m_);
      active_--;
      finished_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex busy_;  // held by the caller of the job in progress
  std::mutex m_;
  std::condition_variable start_, finished_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t count_ = 0, done_ = 0, generation_ = 0, active_ = 0;
  std::atomic<size_t> next_{0};
};

// Splits [0, total) into at most `parts` contiguous ranges of at least `minPart` (the last ones
// may be shorter) and runs f(begin, end) on each through the shared pool.
inline void parallelRanges(size_t total, size_t minPart, const std::function<void(size_t, size_t)>& f) {
  WorkPool& pool = WorkPool::shared();
  const size_t parts = std::max<size_t>(1, std::min(pool.threads(), total / std::max<size_t>(1, minPart)));
  const size_t step = (total + parts - 1) / parts;
  pool.run(parts, [&](size_t k) {
    const size_t b = k * step, e = std::min(total, b + step);
    if (b < e) f(b, e);
  });
}

}  // namespace sgfp4
