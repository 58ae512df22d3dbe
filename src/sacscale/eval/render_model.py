"""The render model: the task model built by the same code with Menagerie's visuals, a
floor texture, a skybox and lights; and the check that it is the task's robot.

MuJoCo is imported inside the functions: the GL backend must be chosen first
(sacscale.eval.gl_backend).
"""

from __future__ import annotations

import numpy as np


def build_render_model(task_model, width: int, height: int, software: bool = False):
    """The task model with Menagerie's visuals, a floor texture, skybox and lights.

    software: cheaper settings for a software rasteriser (OSMesa): no multisampling, a
    smaller shadow map.

    Same code as the task model (g1_model.build_spec), visuals kept; the excluded
    self-contact pairs are copied from task_model (the task's rest-contact search would
    also measure the visual meshes). Visual-only additions: the floor geom gets a checker
    material and a visible group (its physics is untouched), textures, a light.
    """
    # these import MuJoCo: only once the GL backend is chosen (sacscale.eval.gl_backend)
    from sacscale.mujoco_lib import mujoco
    from sacscale.task import g1_model as g1

    spec = g1.build_spec(exclude_rest_contacts=False, keep_visual=True)
    spec.modelname = "g1_walk_flat_render"
    for b1, b2 in excluded_body_pairs(task_model):
        spec.add_exclude(bodyname1=b1, bodyname2=b2)

    spec.add_texture(name="skybox", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.3, 0.5, 0.7], rgb2=[0.0, 0.0, 0.0],
                     width=512, height=3072)
    spec.add_texture(name="groundplane", type=mujoco.mjtTexture.mjTEXTURE_2D,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, mark=mujoco.mjtMark.mjMARK_EDGE,
                     rgb1=[0.2, 0.3, 0.4], rgb2=[0.1, 0.2, 0.3], markrgb=[0.8, 0.8, 0.8], width=300, height=300)
    ground = spec.add_material(name="groundplane", texuniform=True, texrepeat=[2, 2], reflectance=0.2)
    ground.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "groundplane"
    floor = spec.geom("floor")
    floor.material = "groundplane"
    floor.group = 0  # visible (the task's colliders are group 3, hidden)

    # Menagerie's directional light, made to follow the robot so its shadow stays in view,
    # and a soft fill light; the headlight as in Menagerie's scene.xml
    for light in spec.lights:
        light.mode = mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM
    fill = spec.worldbody.add_light(name="fill", pos=[-2.0, 2.0, 4.0], dir=[0.4, -0.4, -0.8],
                                    type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, castshadow=False,
                                    mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM)
    fill.diffuse = [0.3, 0.3, 0.3]
    vis = spec.visual
    vis.headlight.diffuse = [0.6, 0.6, 0.6]
    vis.headlight.ambient = [0.1, 0.1, 0.1]
    vis.headlight.specular = [0.9, 0.9, 0.9]
    vis.rgba.haze = [0.15, 0.25, 0.35, 1.0]
    vis.global_.offwidth = max(int(width), 1)
    vis.global_.offheight = max(int(height), 1)
    vis.map.zfar = 100.0  # the floor to the horizon
    if software:
        # llvmpipe on a few cores: 4x multisampling and a 4096 shadow map cost about 2.5x
        # the frame time (Menagerie's G1 meshes have 390k triangles)
        vis.quality.offsamples = 0
        vis.quality.shadowsize = 1024
    return spec.compile()


def excluded_body_pairs(model) -> list[tuple[str, str]]:
    out = []
    for i in range(model.nexclude):
        sig = int(model.exclude_signature[i])
        out.append((model.body(sig >> 16).name, model.body(sig & 0xFFFF).name))
    return out


# structure and kinematics: a difference here means the video would not show the task's robot
_KINEMATIC_FIELDS = ("body_parentid", "body_pos", "body_quat", "body_ipos", "body_iquat", "jnt_type",
                     "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_pos", "jnt_axis", "qpos0")
# dynamics and contacts: compared too, reported (the motion shown is the task env's anyway)
_PHYSICS_FIELDS = ("body_mass", "body_inertia", "jnt_range", "dof_armature", "dof_damping", "dof_frictionloss",
                   "actuator_trnid", "actuator_gainprm", "actuator_biasprm", "actuator_forcerange",
                   "sensor_type", "sensor_objid")
_GEOM_FIELDS = ("geom_bodyid", "geom_type", "geom_size", "geom_pos", "geom_quat", "geom_friction",
                "geom_priority", "geom_condim", "geom_contype", "geom_conaffinity", "geom_margin", "geom_solref",
                "geom_solimp")
_OPT_FIELDS = ("timestep", "integrator", "solver", "cone", "iterations", "ls_iterations", "tolerance")


def compare_models(render_model, task_model) -> list[str]:
    """Raise ValueError if the render model's joints or kinematic tree differ from the task
    model's; return the names of the dynamics/contact fields that differ (empty: none)."""
    from sacscale.mujoco_lib import mujoco  # only once the GL backend is chosen (sacscale.eval.gl_backend)

    r, t = render_model, task_model
    if (r.nq, r.nv, r.nu, r.njnt, r.nbody) != (t.nq, t.nv, t.nu, t.njnt, t.nbody):
        raise ValueError(f"render model nq/nv/nu/njnt/nbody {(r.nq, r.nv, r.nu, r.njnt, r.nbody)} != "
                         f"task model's {(t.nq, t.nv, t.nu, t.njnt, t.nbody)}")
    for kind, n in ((mujoco.mjtObj.mjOBJ_JOINT, t.njnt), (mujoco.mjtObj.mjOBJ_BODY, t.nbody),
                    (mujoco.mjtObj.mjOBJ_ACTUATOR, t.nu)):
        rn = [mujoco.mj_id2name(r, kind, i) for i in range(n)]
        tn = [mujoco.mj_id2name(t, kind, i) for i in range(n)]
        if rn != tn:
            raise ValueError(f"render model {kind.name.removeprefix('mjOBJ_').lower()} names/order differ "
                             f"from the task model's")
    bad = [f for f in _KINEMATIC_FIELDS if not np.array_equal(getattr(r, f), getattr(t, f))]
    if bad:
        raise ValueError(f"render model kinematics differ from the task model's: {', '.join(bad)}")
    diff = [f for f in _PHYSICS_FIELDS if not np.array_equal(getattr(r, f), getattr(t, f))]
    rc = (r.geom_contype != 0) | (r.geom_conaffinity != 0)
    tc = (t.geom_contype != 0) | (t.geom_conaffinity != 0)
    if rc.sum() != tc.sum():
        diff.append("colliding geoms (count)")
    else:
        diff += [f"{f} (colliding geoms)" for f in _GEOM_FIELDS
                 if not np.array_equal(getattr(r, f)[rc], getattr(t, f)[tc])]
    if excluded_body_pairs(r) != excluded_body_pairs(t):
        diff.append("excluded body pairs")
    diff += [f"opt.{f}" for f in _OPT_FIELDS if getattr(r.opt, f) != getattr(t.opt, f)]
    return diff
