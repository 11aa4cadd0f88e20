"""Chat members: who is what in a chat (``set_chat_member``) and ``getChatMember``."""

from __future__ import annotations

from typing import Any

from bot.fakegram.chats import Chats
from bot.fakegram.params import RequestParams

JsonDict = dict[str, Any]

MEMBER_STATUSES = ("creator", "administrator", "member", "restricted", "left", "kicked")
"""Chat member statuses accepted by ``set_chat_member``, as the Bot API spells them."""

_ADMINISTRATOR_RIGHTS: JsonDict = {
    "can_be_edited": False,
    "is_anonymous": False,
    "can_manage_chat": True,
    "can_delete_messages": True,
    "can_manage_video_chats": True,
    "can_restrict_members": True,
    "can_promote_members": False,
    "can_change_info": True,
    "can_invite_users": True,
    "can_post_stories": True,
    "can_edit_stories": True,
    "can_delete_stories": True,
    "can_pin_messages": True,
    "can_manage_topics": False,
}
_RESTRICTED_RIGHTS: JsonDict = {
    "is_member": True,
    "can_send_messages": False,
    "can_send_audios": False,
    "can_send_documents": False,
    "can_send_photos": False,
    "can_send_videos": False,
    "can_send_video_notes": False,
    "can_send_voice_notes": False,
    "can_send_polls": False,
    "can_send_other_messages": False,
    "can_add_web_page_previews": False,
    "can_react_to_messages": False,
    "can_change_info": False,
    "can_invite_users": False,
    "can_pin_messages": False,
    "can_manage_topics": False,
    "can_edit_tag": False,
    "until_date": 0,
}


class ChatMembers:
    """Member statuses per chat (default "member"), as ``getChatMember`` reports them."""

    def __init__(self, chats: Chats) -> None:
        self._chats = chats

    def set_status(self, chat_id: int, user_id: int, status: str) -> None:
        """Set what ``getChatMember`` reports for the user in the chat."""
        if status not in MEMBER_STATUSES:
            raise ValueError(f"status must be one of {', '.join(MEMBER_STATUSES)}; got {status!r}")
        self._chats.chat(chat_id).member_status[user_id] = status

    async def get_chat_member(self, params: RequestParams) -> JsonDict:
        chat_id = params.chat_id()
        user_id = params.required_int("user_id", "user not found")
        status = self._chats.member_status(chat_id, user_id)
        member: JsonDict = {"status": status, "user": self._chats.user(user_id)}
        if status == "creator":
            member["is_anonymous"] = False
        elif status == "administrator":
            member.update(_ADMINISTRATOR_RIGHTS)
        elif status == "restricted":
            member.update(_RESTRICTED_RIGHTS)
        elif status == "kicked":
            member["until_date"] = 0
        return member
