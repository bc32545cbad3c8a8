// The time box of a document-level QA: minutes left, counted down; past the deadline it says so (never blocks).
const box = document.getElementById("time-box");
if (box) {
  const deadline = Date.parse(box.dataset.deadline);
  const left = box.querySelector(".time-left");
  const tick = () => {
    const seconds = Math.round((deadline - Date.now()) / 1000);
    if (seconds <= 0) {
      box.classList.add("is-over");
      left.textContent = "time is up";
      return false;
    }
    const minutes = Math.floor(seconds / 60);
    left.textContent = `${minutes}:${String(seconds % 60).padStart(2, "0")} left`;
    return true;
  };
  if (tick()) {
    const timer = setInterval(() => {
      if (!tick()) clearInterval(timer);
    }, 1000);
  }
}
