"""The message catalogue: every user-facing string, in English and Simplified Chinese.

Messages are ``str.format`` templates in Telegram HTML. Parameters that are amounts of
money are given in cents and formatted here with the group's currency; everything that
comes from users (names, settings typed by admins) is escaped by the caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.money import format_amount

#: Parameters that hold cents; ``translate`` formats them with the currency.
MONEY_PARAMS = frozenset(
    {
        "amount",
        "needed",
        "available",
        "minimum",
        "maximum",
        "pool",
        "held",
        "total",
        "bid",
        "stake",
        "share",
        "fees",
        "rake",
        "rebate",
        "balance",
    }
)

EN: dict[str, str] = {
    # errors of commands (keys are the engine's and the service's error keys)
    "error.not_bidding": "Bidding is not open right now.",
    "error.not_betting": "Betting is not open right now.",
    "error.not_grabbing": "There is no envelope to grab right now.",
    "error.window_closed": "Too late: that window has closed.",
    "error.bid_too_low": "A bid must be at least {minimum}.",
    "error.not_enough_chips": "Not enough chips: you need {needed}, you have {available}.",
    "error.not_enough_chips_to_bet": (
        "Not enough chips: a bet holds {multiplier}× the stake ({needed}); you have {available}."
    ),
    "error.chips_changed": "Your chips changed in the meantime; nothing was done. Try again.",
    "error.dealer_cannot_bet": "The dealer cannot bet.",
    "error.no_bet_to_cancel": "You have no bet to cancel.",
    "error.bet_too_small": "The smallest bet is {minimum}.",
    "error.bet_too_large": "The largest bet is {maximum}.",
    "error.bet_unchanged": "Your bet is already {amount}.",
    "error.not_in_round": "Only the dealer and players with a bet can grab.",
    "error.already_grabbed": "You already grabbed {amount}.",
    "error.no_round": "No round is running. An admin can /open the table, then /newround.",
    "error.stale_button": "That button belongs to a round that is over.",
    "error.bad_button": "That button is not one of mine.",
    "error.table_closed": "The table is closed. An admin can /open it.",
    "error.round_running": "A round is already running.",
    "error.round_closed": "That round is over.",
    "error.amount_not_positive": "The amount must be more than 0.",
    "error.debit_too_large": "Cannot debit {amount}: only {available} is available.",
    "error.bad_setting": "Not changed: {reason}.",
    "error.bad_amount": "Not an amount: {reason}.",
    "error.amount_too_large": "Too large: the most is {maximum}.",
    "error.amount_missing": "Add an amount, e.g. <code>{example}</code>.",
    "error.not_admin": "Only group admins can do that.",
    "error.group_only": "This works in a group. Add me to a group first.",
    "error.no_target": ("Whose chips? Reply to their message, or give @username or a user id."),
    "error.bad_user_id": (
        "{who} is not a user id: Telegram user ids are whole numbers from 1 to {maximum_id}, "
        "in the digits 0–9."
    ),
    "error.unknown_user": "I have not seen {who} yet; reply to one of their messages instead.",
    "error.bad_round_number": "Give a round number, e.g. <code>/verify 12</code>.",
    "error.round_not_found": "Round {round_id} is not a round of this group.",
    "error.round_not_finished": "Round {round_id} has not ended; its seed is still secret.",
    "error.internal": "Something went wrong; nothing was changed.",
    "error.table_full": "The table is full: {seats} bets a round. Try the next round.",
    "error.bank_empty": (
        "The house deals, but its bank is empty: an admin can /fund it, then /newround."
    ),
    # answers
    "answer.bid_placed": "Your bid of {amount} is the highest.",
    "answer.bet_placed": "Your bet of {amount} is in.",
    "answer.bet_changed": "Your bet is now {amount}.",
    "answer.bet_cancelled": "Your bet of {amount} is cancelled.",
    "answer.grabbed": "You grabbed {share}!",
    "answer.duplicate": "Already done.",
    # board
    "board.title": "<b>{game}</b> · round #{round_id}",
    "game.envelope68": "🧧 68 NiuNiu",
    "game.bullbull": "🃏 Bull Bull",
    "game.poker29": "🃏 Niu-Niu Poker",
    "game.poker29_vn": "🃏 Niu-Niu Poker (ties push)",
    "board.shoe": "Shoe #{shoe_id} hash: <code>{commitment}</code> · {offset} cards dealt",
    "board.house": "Dealer: the house · pool {pool}",
    "board.dealer_hand": "Dealer's hand",
    "board.phase.bidding": "Bidding for dealer · {seconds}s left",
    "board.phase.betting": "Betting · {seconds}s left",
    "board.phase.grabbing": "Grab your envelope! · {seconds}s left",
    "board.phase.settled": "Settled",
    "board.phase.void": "Ended without play",
    "board.commitment": "Seed hash: <code>{commitment}</code>",
    "board.no_bid": "No bid yet. Minimum bid {minimum} (type a number or /bid).",
    "board.high_bid": "Highest bid: {bid} by {name}. Next bid at least {minimum}.",
    "board.dealer": "Dealer: {name} · pool {pool}",
    "board.bets_header": "Bets ({count}):",
    "board.bet_line": "• {name}: {stake}",
    "board.more_bets": "…and {count} more",
    "board.no_bets": "No bets yet. Bets {minimum}–{maximum} (type a number or /bet).",
    "board.grabbed": "Grabbed: {grabbed}/{count}",
    "button.bid": "Bid {amount}",
    "button.bet": "Bet {amount}",
    "button.cancel_bet": "Cancel bet",
    "button.grab": "🧧 Grab",
    # results
    "results.title": "<b>Round #{round_id} results</b> · {game}",
    "results.house_name": "(the house)",
    "results.shoe": (
        "Dealt from shoe #{shoe_id}, cards {first}–{last}. The shoe's seed is revealed when "
        "it is replaced; then /verify checks this round."
    ),
    "results.dealer": "Dealer {name}: {envelope} {kind} {multiplier}× · {net}",
    "results.player": "{name}: {envelope} {kind} {multiplier}× · {result} · {net}",
    "results.totals": "Rake {rake} · rebates {rebate} · fees {fees}",
    "results.seed": "Seed: <code>{seed}</code> (check with /verify {round_id})",
    "results.void.no_bids": "Round #{round_id} ended: nobody bid for dealer.",
    "results.void.no_bets": "Round #{round_id} ended: no bets. The dealer's chips are released.",
    "results.void.redeal": (
        "Round #{round_id}: the dealer grabbed 0.01 — re-deal! Everything is refunded."
    ),
    "results.void.error": "Round #{round_id} was voided by an error. Everything is refunded.",
    "result.win": "win",
    "result.lose": "lose",
    "result.tie": "tie",
    "result.drink": "喝水 (pool empty, refunded)",
    "result.immune": "免死 (0.01, refunded)",
    "result.refund": "refund",
    "kind.ordinary": "{points} pt",
    "kind.special": "{english} {chinese}",
    "kind.cards": "{name}",
    "shoe.replaced": (
        "🔀 New shoe #{shoe_id} (more than half of shoe #{old_id} was dealt). Shoe "
        "#{old_id}'s seed: <code>{seed}</code> — /verify checks the rounds dealt from it."
    ),
    "shoe.retired": (
        "Shoe #{old_id} is retired: this table plays another game now. Its seed: "
        "<code>{seed}</code> — /verify checks the rounds dealt from it."
    ),
    # commands
    "balance.group": "{name}: available {available}, held {held}.",
    "balance.private_header": "Your chips:",
    "balance.private_line": "• {title}: available {available}, held {held}",
    "balance.private_none": "You have no chips in any group yet.",
    "history.header": "Last rounds:",
    "history.settled": "#{round_id}: dealer {name}, pool {pool}, dealer {net}",
    "history.void": "#{round_id}: ended ({reason})",
    "history.open": "#{round_id}: {phase}",
    "history.none": "No rounds yet.",
    "verify.ok": (
        "Round #{round_id}: SHA-256 of the seed matches the published hash ✅\n"
        "Seed: <code>{seed}</code>\nSplit ({count} shares, total {total}): {shares}\n"
        "Grabbed:{grabbed}\nRecompute: <code>niuniu-bot verify --seed {seed} --count {count} "
        "--total {total_plain}</code>"
    ),
    "verify.mismatch": "Round #{round_id}: the stored split does NOT match its seed ❌",
    "verify.cards_ok": (
        "Round #{round_id}: SHA-256 of the seed matches the published hash ✅\n"
        "Seed: <code>{seed}</code> · {decks} deck(s), cards {first}–{last} dealt round-robin, "
        "the dealer last:{hands}"
    ),
    "verify.shoe_secret": (
        "Round #{round_id} was dealt from shoe #{shoe_id} (hash <code>{commitment}</code>), "
        "cards {first}–{last}. Its seed is revealed when the shoe is replaced."
    ),
    "verify.no_split": "Round #{round_id} ended before anything was dealt. Seed: <code>{seed}</code>",
    "verify.no_deal_shoe": (
        "Round #{round_id} ended before anything was dealt: no card of the shoe was used."
    ),
    "table.opened": "The table is open. Start a round with /newround.",
    "table.closed": "The table is closed. A running round finishes; no new round starts.",
    "table.already_open": "The table is already open.",
    "table.already_closed": "The table is already closed.",
    "config.header": "Settings of this group:",
    "config.line": "• <code>{name}</code> = {value}",
    "config.usage": "Change one with <code>/set KEY VALUE</code>, e.g. <code>/set rake 5%</code>.",
    "set.usage": "Usage: <code>/set KEY VALUE</code>, e.g. <code>/set bet_seconds 40</code>.",
    "set.done": "{name}: {old} → {new}",
    "set.unchanged": "{name}: already {value}; nothing changed.",
    "set.table_defaults": (
        "Table defaults of this game: rake {rake}, rebate {rebate}, dealer fees {fees}, "
        "bets {minimum}–{maximum}."
    ),
    "set.next_round": "It takes effect at the next round.",
    "fund.done": "Funded the bank with {amount}. The bank holds {balance}.",
    "bank.balance": "The bank holds {balance}. It deals when <code>/set dealer house</code>.",
    "credit.done": "Credited {amount} to {name}. Available now {available}.",
    "debit.done": "Debited {amount} from {name}. Available now {available}.",
    "ledger.header": "Statement of {name} (latest first):",
    "ledger.line": "• #{transaction_id} {kind}{round}: {change}",
    "ledger.none": "No ledger entries for {name}.",
    "audit.header": "Recent admin actions:",
    "audit.line": "• {who} {action} {details}",
    "audit.none": "No admin actions yet.",
    "private.start": (
        "Hi! I host 68 NiuNiu red-envelope rounds in groups.\n"
        "1. Add me to your group.\n2. An admin sends /open, credits chips with /credit "
        "(as a reply to a player's message), then /newround.\n"
        "3. Players bid for dealer, bet, and grab the envelope.\n"
        "Admins can also deal the card games: <code>/set ruleset bullbull</code> (or poker29, "
        "poker29_vn), with the group's bank as dealer: <code>/set dealer house</code>.\n"
        "See /help and /rules."
    ),
    "help.players": "<b>Players</b>",
    "help.admins": "<b>Admins</b>",
    "help.private": "<b>Here</b> (the game itself is played in groups)",
    "command.newround": "start a round",
    "command.bid": "bid for dealer: /bid 500",
    "command.bet": "bet: /bet 20 (again to change, /bet 0 to cancel)",
    "command.balance": "your chips here",
    "command.balance.private": "your chips in every group",
    "command.history": "last rounds",
    "command.rules": "rules of this table",
    "command.verify": "check a round: /verify 12",
    "command.bank": "the group bank's balance",
    "command.help": "all commands",
    "command.start": "how to begin",
    "command.open": "open the table",
    "command.close": "close the table (a running round finishes)",
    "command.config": "every setting of this group",
    "command.set": "change a setting: /set ruleset bullbull, /set dealer house",
    "command.credit": "give chips: /credit 100 as a reply, or /credit @name 100",
    "command.debit": "take chips back: /debit 100 as a reply",
    "command.fund": "move chips into the group's bank: /fund 1000",
    "command.ledger": "a player's statement (as a reply, @name or an id)",
    "command.audit": "recent admin actions",
    "rules.dealer.bid": "Highest bid is the dealer.",
    "rules.dealer.house": "The house deals from its bank; there is no bidding.",
    "rules.table": (
        "This table: bets {min_bet}–{max_bet}, min bid {min_bid}, rake {rake}, "
        "rebate {rebate}, dealer fees {fees}."
    ),
    "rules.table_house": "This table: bets {min_bet}–{max_bet}, rake {rake}, rebate {rebate}.",
    "rules.bullbull": (
        "<b>Bull Bull</b> (five cards, a fresh deck every round)\n{dealer} A=1, 2–9 face, "
        "10 J Q K = 10. Three cards summing to a multiple of 10 make a bull; the other two "
        "give the points (last digit; 0 = Niu Niu). No such three: No Bull.\n"
        "Highest first: Five Small (all under 5, sum ≤ 10) 5× · Bomb (four of a rank) 5× · "
        "Five Face (all J Q K) 5× · Niu Niu 3× · Bull 9–7 2× · Bull 6–1 1× · No Bull 1×.\n"
        "Same kind: the highest card (K high), then suit ♠ ♥ ♣ ♦. Winners get stake × their "
        "multiplier; losers pay stake × the dealer's, so a bet holds 5× the stake. "
        "At most 9 bets a round."
    ),
    "rules.poker29": (
        "<b>Niu-Niu Poker</b> (five cards from a 6-deck shoe, reshuffled once more than half "
        "is dealt)\n{dealer} Each hand is split into three cards (left) and two (right); the "
        "bot finds the best split. J Q K = 10, A = 1.\nHighest first: Ultimate (all J Q K) "
        "5× · Niu-Niu (both sides multiples of 10) 3× · Big Point 9–7 2× · Small Point 6–1 1× "
        "· High Card (no left multiple of 10) 1×.\nSame pattern: the right hand's points, then "
        "card by card (K high; suits ♠ ♥ ♦ ♣); identical hands push. A winner is paid by "
        "their own pattern; a loser loses the stake. At most 30 bets a round."
    ),
    "rules.poker29_vn": (
        "<b>Niu-Niu Poker, ties push</b> (five cards from a 6-deck shoe, reshuffled once more "
        "than half is dealt)\n{dealer} As Niu-Niu Poker: Ultimate 5× · Niu-Niu 3× · Big Point "
        "9–7 2× · Small Point 6–1 1× · High Card 1×, but equal pattern and points push (the "
        "bet is returned): no card-by-card tie-break. At most 30 bets a round."
    ),
    "rules.envelope68": (
        "<b>68 NiuNiu</b>\n{dealer} Envelope amount X.YZ: points are the "
        "last digit of X+Y+Z (0 = 10, Niu Niu).\n"
        "Kinds, highest first: 豹子 Baozi X=Y=Z 18× · 满牛 Manniu .00 15× · 反顺 Fanshun "
        "(2.10) 14× · 顺子 Shunzi (1.23) 13× · 对子 Duizi Y=Z 12× · 金牛 Jinniu 0.Y0 11× · "
        "ordinary: points = multiplier.\n"
        "Winners get stake × their multiplier; losers pay stake × the dealer's. Same kind: "
        "points, then amount. Pool runs out: 喝水 (refund). 0.01: 免死 for a player, re-deal "
        "for the dealer."
    ),
}

ZH: dict[str, str] = {
    "error.not_bidding": "现在不是抢庄时间。",
    "error.not_betting": "现在不是下注时间。",
    "error.not_grabbing": "现在没有红包可抢。",
    "error.window_closed": "太迟了，时间已过。",
    "error.bid_too_low": "抢庄金额至少 {minimum}。",
    "error.not_enough_chips": "筹码不足：需要 {needed}，你有 {available}。",
    "error.not_enough_chips_to_bet": "筹码不足：下注需冻结 {multiplier} 倍（{needed}），你有 {available}。",
    "error.chips_changed": "你的筹码刚刚有变动，本次未执行，请重试。",
    "error.dealer_cannot_bet": "庄家不能下注。",
    "error.no_bet_to_cancel": "你没有可取消的下注。",
    "error.bet_too_small": "最小下注 {minimum}。",
    "error.bet_too_large": "最大下注 {maximum}。",
    "error.bet_unchanged": "你的下注已经是 {amount}。",
    "error.not_in_round": "只有庄家和已下注的玩家可以抢红包。",
    "error.already_grabbed": "你已经抢到 {amount}。",
    "error.no_round": "没有进行中的牌局。管理员可以 /open 开桌，然后 /newround。",
    "error.stale_button": "这个按钮属于已结束的牌局。",
    "error.bad_button": "这个按钮不是我发出的。",
    "error.table_closed": "牌桌已关闭，管理员可以 /open 开桌。",
    "error.round_running": "已有牌局在进行中。",
    "error.round_closed": "该牌局已结束。",
    "error.amount_not_positive": "金额必须大于 0。",
    "error.debit_too_large": "无法扣除 {amount}：可用只有 {available}。",
    "error.bad_setting": "未修改：{reason}。",
    "error.bad_amount": "金额无效：{reason}。",
    "error.amount_too_large": "金额过大：最多 {maximum}。",
    "error.amount_missing": "请加上金额，例如 <code>{example}</code>。",
    "error.not_admin": "只有群管理员可以这样做。",
    "error.group_only": "此命令仅在群组中可用，请先把我加入群组。",
    "error.no_target": "给谁？请回复对方的消息，或写 @用户名 或用户 ID。",
    "error.bad_user_id": "{who} 不是有效的用户 ID：Telegram 用户 ID 是 1 到 {maximum_id} 之间的整数，须用数字 0–9 书写。",
    "error.unknown_user": "我还没见过 {who}，请回复对方的消息。",
    "error.bad_round_number": "请写局号，例如 <code>/verify 12</code>。",
    "error.round_not_found": "第 {round_id} 局不属于本群。",
    "error.round_not_finished": "第 {round_id} 局尚未结束，种子仍保密。",
    "error.internal": "出错了，没有任何改动。",
    "error.table_full": "本局已满：每局最多 {seats} 注，请等下一局。",
    "error.bank_empty": "由庄房坐庄，但庄房余额为零：管理员可用 /fund 注资，然后 /newround。",
    "answer.bid_placed": "你的抢庄 {amount} 目前最高。",
    "answer.bet_placed": "你已下注 {amount}。",
    "answer.bet_changed": "你的下注改为 {amount}。",
    "answer.bet_cancelled": "已取消下注 {amount}。",
    "answer.grabbed": "你抢到 {share}！",
    "answer.duplicate": "已处理。",
    "board.title": "<b>{game}</b> · 第 {round_id} 局",
    "game.envelope68": "🧧 68 牛牛",
    "game.bullbull": "🃏 斗牛",
    "game.poker29": "🃏 牛牛扑克",
    "game.poker29_vn": "🃏 牛牛扑克（同点和局）",
    "board.shoe": "牌靴 #{shoe_id} 哈希：<code>{commitment}</code> · 已发 {offset} 张",
    "board.house": "庄家：庄房 · 庄池 {pool}",
    "board.dealer_hand": "庄家牌",
    "board.phase.bidding": "抢庄中 · 剩 {seconds} 秒",
    "board.phase.betting": "下注中 · 剩 {seconds} 秒",
    "board.phase.grabbing": "抢红包！· 剩 {seconds} 秒",
    "board.phase.settled": "已结算",
    "board.phase.void": "本局未进行",
    "board.commitment": "种子哈希：<code>{commitment}</code>",
    "board.no_bid": "尚无人抢庄。最低 {minimum}（直接发数字或 /bid）。",
    "board.high_bid": "最高抢庄：{name} {bid}。下一口至少 {minimum}。",
    "board.dealer": "庄家：{name} · 庄池 {pool}",
    "board.bets_header": "下注（{count}）：",
    "board.bet_line": "• {name}：{stake}",
    "board.more_bets": "……还有 {count} 注",
    "board.no_bets": "尚无下注。下注范围 {minimum}–{maximum}（直接发数字或 /bet）。",
    "board.grabbed": "已抢：{grabbed}/{count}",
    "button.bid": "抢庄 {amount}",
    "button.bet": "下注 {amount}",
    "button.cancel_bet": "取消下注",
    "button.grab": "🧧 抢红包",
    "results.title": "<b>第 {round_id} 局结果</b> · {game}",
    "results.house_name": "（庄房）",
    "results.shoe": "由牌靴 #{shoe_id} 发出第 {first}–{last} 张。牌靴更换时公布其种子，届时可用 /verify 验证本局。",
    "results.dealer": "庄家 {name}：{envelope} {kind} {multiplier}倍 · {net}",
    "results.player": "{name}：{envelope} {kind} {multiplier}倍 · {result} · {net}",
    "results.totals": "抽水 {rake} · 返水 {rebate} · 费用 {fees}",
    "results.seed": "种子：<code>{seed}</code>（用 /verify {round_id} 验证）",
    "results.void.no_bids": "第 {round_id} 局结束：无人抢庄。",
    "results.void.no_bets": "第 {round_id} 局结束：无人下注，庄家筹码已解冻。",
    "results.void.redeal": "第 {round_id} 局：庄家抢到 0.01，重新发牌！全部退还。",
    "results.void.error": "第 {round_id} 局因系统错误作废，全部退还。",
    "result.win": "赢",
    "result.lose": "输",
    "result.tie": "和",
    "result.drink": "喝水（庄池不足，退本）",
    "result.immune": "免死（0.01，退本）",
    "result.refund": "退还",
    "kind.ordinary": "{points}点",
    "kind.special": "{chinese}",
    "kind.cards": "{name}",
    "shoe.replaced": (
        "🔀 新牌靴 #{shoe_id}（牌靴 #{old_id} 已发出一半以上）。牌靴 #{old_id} 的种子："
        "<code>{seed}</code> —— 可用 /verify 验证其发出的牌局。"
    ),
    "shoe.retired": (
        "牌靴 #{old_id} 已停用：本桌现在玩其他游戏。其种子：<code>{seed}</code> —— "
        "可用 /verify 验证其发出的牌局。"
    ),
    "balance.group": "{name}：可用 {available}，冻结 {held}。",
    "balance.private_header": "你的筹码：",
    "balance.private_line": "• {title}：可用 {available}，冻结 {held}",
    "balance.private_none": "你在任何群都还没有筹码。",
    "history.header": "最近的牌局：",
    "history.settled": "#{round_id}：庄家 {name}，庄池 {pool}，庄家 {net}",
    "history.void": "#{round_id}：结束（{reason}）",
    "history.open": "#{round_id}：{phase}",
    "history.none": "还没有牌局。",
    "verify.ok": (
        "第 {round_id} 局：种子的 SHA-256 与公布的哈希一致 ✅\n种子：<code>{seed}</code>\n"
        "分配（{count} 份，共 {total}）：{shares}\n抢到：{grabbed}\n"
        "自行验证：<code>niuniu-bot verify --seed {seed} --count {count} --total {total_plain}</code>"
    ),
    "verify.mismatch": "第 {round_id} 局：存储的分配与种子不符 ❌",
    "verify.cards_ok": (
        "第 {round_id} 局：种子的 SHA-256 与公布的哈希一致 ✅\n种子：<code>{seed}</code> · "
        "{decks} 副牌，第 {first}–{last} 张轮流发出，庄家最后：{hands}"
    ),
    "verify.shoe_secret": (
        "第 {round_id} 局由牌靴 #{shoe_id}（哈希 <code>{commitment}</code>）发出第 {first}–{last} 张。"
        "牌靴更换时公布其种子。"
    ),
    "verify.no_split": "第 {round_id} 局在发牌（发红包）前结束。种子：<code>{seed}</code>",
    "verify.no_deal_shoe": "第 {round_id} 局在发牌前结束，未用牌靴中的牌。",
    "table.opened": "牌桌已开，用 /newround 开局。",
    "table.closed": "牌桌已关闭。进行中的牌局会打完，不再开新局。",
    "table.already_open": "牌桌已经是开着的。",
    "table.already_closed": "牌桌已经关闭。",
    "config.header": "本群设置：",
    "config.line": "• <code>{name}</code> = {value}",
    "config.usage": "用 <code>/set 名称 值</code> 修改，例如 <code>/set rake 5%</code>。",
    "set.usage": "用法：<code>/set 名称 值</code>，例如 <code>/set bet_seconds 40</code>。",
    "set.done": "{name}：{old} → {new}",
    "set.unchanged": "{name}：已经是 {value}，未作修改。",
    "set.table_defaults": (
        "本游戏的默认桌设：抽水 {rake}，返水 {rebate}，庄家费用 {fees}，下注 {minimum}–{maximum}。"
    ),
    "set.next_round": "下一局起生效。",
    "fund.done": "已向庄房注资 {amount}，庄房余额 {balance}。",
    "bank.balance": "庄房余额 {balance}。<code>/set dealer house</code> 时由庄房坐庄。",
    "credit.done": "已给 {name} 上分 {amount}，可用 {available}。",
    "debit.done": "已从 {name} 下分 {amount}，可用 {available}。",
    "ledger.header": "{name} 的流水（最新在前）：",
    "ledger.line": "• #{transaction_id} {kind}{round}：{change}",
    "ledger.none": "{name} 没有流水。",
    "audit.header": "最近的管理操作：",
    "audit.line": "• {who} {action} {details}",
    "audit.none": "还没有管理操作。",
    "private.start": (
        "你好！我在群里主持 68 牛牛红包游戏。\n1. 把我加入群组。\n"
        "2. 管理员发送 /open，回复玩家消息用 /credit 上分，然后 /newround。\n"
        "3. 玩家抢庄、下注、抢红包。\n管理员也可以开牌局：<code>/set ruleset bullbull</code>"
        "（或 poker29、poker29_vn），由庄房坐庄：<code>/set dealer house</code>。\n详见 /help 和 /rules。"
    ),
    "help.players": "<b>玩家</b>",
    "help.admins": "<b>管理员</b>",
    "help.private": "<b>私聊可用</b>（游戏在群里进行）",
    "command.newround": "开局",
    "command.bid": "抢庄：/bid 500",
    "command.bet": "下注：/bet 20（再发可改，/bet 0 取消）",
    "command.balance": "我在本群的筹码",
    "command.balance.private": "我在各群的筹码",
    "command.history": "最近牌局",
    "command.rules": "本桌规则",
    "command.verify": "验证牌局：/verify 12",
    "command.bank": "庄房余额",
    "command.help": "全部命令",
    "command.start": "如何开始",
    "command.open": "开桌",
    "command.close": "关桌（进行中的牌局会打完）",
    "command.config": "本群全部设置",
    "command.set": "修改设置：/set ruleset bullbull、/set dealer house",
    "command.credit": "上分：回复玩家消息 /credit 100，或 /credit @名字 100",
    "command.debit": "下分：回复玩家消息 /debit 100",
    "command.fund": "庄房注资：/fund 1000",
    "command.ledger": "玩家流水（回复、@名字或 id）",
    "command.audit": "管理记录",
    "rules.dealer.bid": "出价最高者坐庄。",
    "rules.dealer.house": "由庄房坐庄，不抢庄。",
    "rules.table": "本桌：下注 {min_bet}–{max_bet}，最低抢庄 {min_bid}，抽水 {rake}，返水 {rebate}，庄家费用 {fees}。",
    "rules.table_house": "本桌：下注 {min_bet}–{max_bet}，抽水 {rake}，返水 {rebate}。",
    "rules.bullbull": (
        "<b>斗牛</b>（五张牌，每局一副新牌）\n{dealer}A=1，2–9 按面值，10 J Q K = 10。任意三张之和为 10 "
        "的倍数即有牛，另两张之和的个位为点数（0 为牛牛），否则没牛。\n从大到小：五小牛 5倍 · 炸弹 5倍 · "
        "五花牛 5倍 · 牛牛 3倍 · 牛九至牛七 2倍 · 牛六至牛一 1倍 · 没牛 1倍。\n同牌型比最大单张（K 最大），"
        "再比花色 ♠ ♥ ♣ ♦。闲家赢按自己倍数，输按庄家倍数，下注冻结 5 倍。每局最多 9 注。"
    ),
    "rules.poker29": (
        "<b>牛牛扑克</b>（六副牌的牌靴，发出一半以上后重新洗牌）\n{dealer}每手分为三张（左）和两张（右），"
        "由机器人选最佳分法。J Q K = 10，A = 1。\n从大到小：至尊牛牛 5倍 · 牛牛 3倍 · 大点 9–7 2倍 · "
        "小点 6–1 1倍 · 高牌 1倍。\n同牌型比右手点数，再逐张比牌（K 最大；花色 ♠ ♥ ♦ ♣），完全相同为和局。"
        "闲家赢按自己牌型赔付，输则输掉本金。每局最多 30 注。"
    ),
    "rules.poker29_vn": (
        "<b>牛牛扑克（同点和局）</b>（六副牌的牌靴，发出一半以上后重新洗牌）\n{dealer}同牛牛扑克："
        "至尊牛牛 5倍 · 牛牛 3倍 · 大点 2倍 · 小点 1倍 · 高牌 1倍，但牌型与点数相同即和局（退还下注），"
        "不逐张比牌。每局最多 30 注。"
    ),
    "rules.envelope68": (
        "<b>68 牛牛</b>\n{dealer}红包金额 X.YZ：点数为 X+Y+Z 的个位（0 为 10 点牛牛）。\n"
        "牌型从大到小：豹子 18倍 · 满牛 15倍 · 反顺 14倍 · 顺子 13倍 · 对子 12倍 · 金牛 11倍 · "
        "普通牌点数即倍数。\n闲家赢按自己牌型倍数，输按庄家倍数。同牌型比点数，再比金额。"
        "庄池不足：喝水退本。0.01：闲家免死，庄家重新发牌。"
    ),
}

CATALOGUE: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}


def translate(language: str, key: str, currency: str = "", **params: Any) -> str:
    """The message ``key`` in ``language`` (English if missing), with money params formatted."""
    template = CATALOGUE.get(language, EN).get(key) or EN[key]
    return template.format(**format_params(params, currency))


def format_params(params: Mapping[str, Any], currency: str) -> dict[str, Any]:
    """Format the money parameters (ints in cents) with the currency; others unchanged."""
    return {
        name: format_amount(value, currency)
        if name in MONEY_PARAMS and isinstance(value, int) and not isinstance(value, bool)
        else value
        for name, value in params.items()
    }
