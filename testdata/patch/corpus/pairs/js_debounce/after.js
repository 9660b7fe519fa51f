import { fetchResults } from "./api.js";

const input = document.querySelector("#search");
const list = document.querySelector("#results");

function debounce(fn, ms) {
  let timer;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => fn(...args), ms);
  };
}

function render(results) {
  list.innerHTML = "";
  for (const r of results) {
    const li = document.createElement("li");
    li.textContent = r.title;
    li.dataset.id = r.id;
    list.appendChild(li);
  }
}

async function onInput(event) {
  const query = event.target.value.trim();
  if (query.length < 2) {
    render([]);
    return;
  }
  const results = await fetchResults(query);
  render(results);
}

input.addEventListener("input", debounce(onInput, 250));
