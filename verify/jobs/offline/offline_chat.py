"""llm.chat() against llm.generate(): what the chat template adds to the prompt, and to the answer.

The page's snippet, with vllm.LLM in-process: the same user text as a chat
message and as a raw prompt, greedy, and the chat prompt's tokens against the
model's chat template applied by its own tokenizer.
"""

from __future__ import annotations

from verify.job import OFFLINE, Claim, Job, verdict_if

SNIPPET = "offline/chat_vs_generate.py"
TEXT = "Name three colours."
MAX_TOKENS = 32


def collect(ctx) -> dict:
    from vllm import SamplingParams

    from verify.measure import capture
    snippet = ctx.snippet(SNIPPET)
    llm = ctx.llm()
    chat, plain = snippet.chat_and_generate(llm, TEXT, SamplingParams(max_tokens=MAX_TOKENS, temperature=0))
    tokenizer = llm.get_tokenizer()
    templated = tokenizer.apply_chat_template([{"role": "user", "content": TEXT}], add_generation_prompt=True,
                                              tokenize=True)
    # Recent transformers return a BatchEncoding (a mapping), older ones a plain list of ids.
    templated = list(templated["input_ids"] if hasattr(templated, "keys") else templated)
    # One event per token each call generated.
    return {"chat": capture.results("offline-chat", chat.outputs[0].token_ids,
                                    prompt_token_ids=list(chat.prompt_token_ids), text=chat.outputs[0].text,
                                    prompt=tokenizer.decode(chat.prompt_token_ids)),
            "generate": capture.results("offline-generate", plain.outputs[0].token_ids,
                                        prompt_token_ids=list(plain.prompt_token_ids), text=plain.outputs[0].text),
            "template_token_ids": templated}


def decide_template(d):
    chat, plain = d["chat"]["prompt_token_ids"], d["generate"]["prompt_token_ids"]
    if not d["template_token_ids"] or not all(isinstance(t, int) for t in d["template_token_ids"]):
        return verdict_if(None, "the tokenizer's own chat template gave no token ids to compare with")
    return verdict_if(chat == d["template_token_ids"] and len(chat) > len(plain),
                      f"chat(): {len(chat)} prompt tokens, exactly the model's chat template applied by its tokenizer; "
                      f"generate() on the same text: {len(plain)} tokens")


def decide_answers_differ(d):
    return verdict_if(d["chat"]["text"] != d["generate"]["text"],
                      f"greedy, same text: chat() answered {d['chat']['text'][:60]!r}, generate() continued with "
                      f"{d['generate']['text'][:60]!r}")


JOB = Job(
    id="offline-chat",
    title="chat() against generate()",
    question="What does llm.chat() add to a prompt compared with llm.generate() on the same text, and does it "
             "change the answer?",
    pages=("offline.md",),
    engine=OFFLINE,
    collect=collect,
    claims=(
        Claim("offline-chat.template-applied", "llm.chat() sends the model's chat template around the message (more "
              "prompt tokens than generate() on the same text).", decide_template),
        Claim("offline-chat.answers-differ", "For the same text, the greedy answer through chat() differed from the "
              "one through generate().", decide_answers_differ),
    ),
)
