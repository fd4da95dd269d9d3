"""The same request several times in a row, and once more among other requests running at the same time."""

import os
import threading

from openai import OpenAI

BASE_URL = os.environ.get("BASE_URL", "http://localhost:8000/v1")
QUESTION = [{"role": "user", "content": "Write two sentences about the moon."}]
OTHERS = ["Tell a story about a cat.", "List five rivers.", "Explain rain.", "Describe a city at night.",
          "Write a haiku about snow."]


def ask(client: OpenAI, messages, **params) -> str:
    r = client.chat.completions.create(model="chat", messages=messages, max_tokens=40, **params)
    return r.choices[0].message.content


def in_a_row(client: OpenAI, times: int, **params) -> list[str]:
    return [ask(client, QUESTION, **params) for _ in range(times)]


def among_others(client: OpenAI, **params) -> str:
    """QUESTION started at the same moment as five other requests, each in a thread of its own."""
    answers = {}
    def run(key, messages, extra):
        answers[key] = ask(client, messages, **extra)
    threads = [threading.Thread(target=run, args=(i, [{"role": "user", "content": q}], {"temperature": 1.0}))
               for i, q in enumerate(OTHERS)]
    threads.append(threading.Thread(target=run, args=("question", QUESTION, params)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers["question"]


if __name__ == "__main__":
    client = OpenAI(base_url=BASE_URL, api_key="EMPTY", max_retries=0)
    alone = in_a_row(client, 3, temperature=0)
    batched = among_others(client, temperature=0)
    print("greedy, three in a row, identical:", len(set(alone)) == 1)
    print("greedy, among others, same as alone:", batched == alone[0])
